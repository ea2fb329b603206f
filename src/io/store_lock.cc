// flock-based lifetime lock.
#include "io/store_lock.h"

#include <poll.h>
#include <sys/file.h>

#include <algorithm>
#include <atomic>
#include <cerrno>

namespace zrec::io {

namespace {

CancelToken g_cancel;  // set by the one thread that runs a command, before it waits

bool lock_wait_cancelled() {
  if (g_cancel.flag != nullptr && g_cancel.flag->load(std::memory_order_relaxed) != 0) return true;
  if (g_cancel.wake_fd < 0) return false;
  pollfd p{g_cancel.wake_fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

bool can_cancel() { return g_cancel.flag != nullptr || g_cancel.wake_fd >= 0; }

// flock(2) with EINTR retried; 0 or errno.
int try_flock(int fd, int op) {
  for (;;) {
    if (::flock(fd, op) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

// Waits until `op | LOCK_NB` succeeds or the token cancels: 0, errno, or ECANCELED.
// Sleeps 1 ms after the first refusal, doubling to 100 ms, so a lock let go is taken
// within 100 ms and a waiter costs ~10 wake-ups a second.
int wait_flock_cancellable(int fd, int op) {
  int sleep_ms = 1;
  for (;;) {
    if (lock_wait_cancelled()) return ECANCELED;
    const int err = try_flock(fd, op | LOCK_NB);
    if (err != EWOULDBLOCK) return err;
    pollfd p{g_cancel.wake_fd, POLLIN, 0};
    (void)::poll(&p, g_cancel.wake_fd >= 0 ? 1 : 0, sleep_ms);  // EINTR: the check above sees why
    sleep_ms = std::min(sleep_ms * 2, 100);
  }
}

}  // namespace

void set_lock_wait_cancel(CancelToken token) { g_cancel = token; }

Status lock_store(const File& meta, LockMode mode, bool wait, const std::string& store_path) {
  const int op = mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH;
  int err = try_flock(meta.fd(), op | LOCK_NB);
  if (err == EWOULDBLOCK && wait)
    err = can_cancel() ? wait_flock_cancellable(meta.fd(), op) : try_flock(meta.fd(), op);
  if (err == 0) return Status::ok();
  if (err == ECANCELED)
    return Status(StatusCode::kCancelled,
                  "interrupted while waiting for the lock on store '" + store_path + "'; nothing was changed");
  if (err == EWOULDBLOCK) {
    // A shared request can only be refused by a writer; an exclusive one by either.
    const char* holder = mode == LockMode::kShared ? "a writer" : "a reader or writer";
    return Status(StatusCode::kBusy, "store '" + store_path + "' is locked by another process (" +
                                         holder + ")");
  }
  return errno_status(err, "cannot lock", meta.path());
}

}  // namespace zrec::io
