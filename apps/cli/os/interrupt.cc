// SIGINT/SIGTERM handlers that only record the signal (see interrupt.h).
#include "cli/os/interrupt.h"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>

#include "cli/os/signal_handlers.h"

namespace zrec::cli {

namespace {

// Written by the handler, read anywhere; lock-free, so async-signal-safe.
std::atomic<int> g_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "the interrupt flag must be lock-free");

// The self-pipe: the handler writes a byte to [1]; readers poll [0]. Made once,
// non-blocking at both ends (a full pipe already says "interrupted").
int g_wake[2] = {-1, -1};

constinit SignalHandlers g_handlers{SIGINT, SIGTERM};

extern "C" void on_interrupt(int sig) {
  const int saved_errno = errno;
  // Keep the first signal: its number decides the exit status.
  int expected = 0;
  g_signal.compare_exchange_strong(expected, sig);
  if (g_wake[1] >= 0) (void)!::write(g_wake[1], "!", 1);
  errno = saved_errno;
}

void make_wake_pipe() {
  if (g_wake[0] < 0 && ::pipe2(g_wake, O_NONBLOCK | O_CLOEXEC) != 0) g_wake[0] = g_wake[1] = -1;
}

void reset_wake_pipe() {
  make_wake_pipe();
  char drain[64];
  while (g_wake[0] >= 0 && ::read(g_wake[0], drain, sizeof drain) > 0) {
  }
}

struct sigaction interrupt_action() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read(2) returns EINTR and sees the flag
  return sa;
}

// Before the outermost scope's handlers: no signal of an earlier scope is left over.
void clear_signal() {
  reset_wake_pipe();
  g_signal.store(0);
}

}  // namespace

InterruptScope::InterruptScope() : scope_(g_handlers, interrupt_action(), clear_signal) {}

int interrupt_signal() { return g_signal.load(std::memory_order_relaxed); }

CancelToken interrupt_token() {
  make_wake_pipe();  // made once, so a token taken before a scope begins wakes at once too
  return {&g_signal, g_wake[0]};
}

int interrupt_exit_code() {
  const int sig = interrupt_signal();
  return 128 + (sig != 0 ? sig : SIGINT);
}

Status cancelled(std::string message) { return Status(StatusCode::kCancelled, std::move(message)); }

}  // namespace zrec::cli
