// SIGBUS/SIGSEGV in a guarded call become a false return (see map_fault_guard.h).
#include "cli/import/map_fault_guard.h"

#include <signal.h>

#include <cassert>

namespace zrec::cli {

namespace {

// The guarded call of this thread: where its fault returns to.
thread_local sigjmp_buf* t_return_to = nullptr;
// The handlers of the guards alive (one at a time in practice).
constinit SignalHandlers g_fault_handlers{SIGBUS, SIGSEGV};

void on_fault(int sig, siginfo_t*, void*) {
  if (sigjmp_buf* to = t_return_to) {
    t_return_to = nullptr;
    siglongjmp(*to, 1);
  }
  // Not a guarded call: put the old disposition back and return, so the access faults
  // again and gets it (the default action, or a sanitizer's report).
  ::sigaction(sig, &g_fault_handlers.previous(sig), nullptr);
}

struct sigaction fault_action() {
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  // SA_NODEFER: the handler leaves by siglongjmp without restoring a signal mask
  // (sigsetjmp(…, 0) saves none: one system call less per guarded call), so the
  // signal must not be blocked while it runs.
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  return sa;
}

}  // namespace

MapFaultGuard::MapFaultGuard() : scope_(g_fault_handlers, fault_action()) {}

bool MapFaultGuard::run(const std::function<void()>& call) {
  assert(t_return_to == nullptr);  // not nested
  sigjmp_buf here;
  if (sigsetjmp(here, 0) != 0) return false;
  t_return_to = &here;
  call();
  t_return_to = nullptr;
  return true;
}

}  // namespace zrec::cli
