// flock-based lifetime lock.
#include "io/store_lock.h"

#include <poll.h>
#include <sys/file.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>

namespace zrec::io {

namespace {

bool lock_wait_cancelled(const CancelToken& cancel) {
  if (cancel.flag != nullptr && cancel.flag->load(std::memory_order_relaxed) != 0) return true;
  if (cancel.wake_fd < 0) return false;
  pollfd p{cancel.wake_fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

bool can_cancel(const CancelToken& cancel) { return cancel.flag != nullptr || cancel.wake_fd >= 0; }

// flock(2) with EINTR retried; 0 or errno.
int try_flock(int fd, int op) {
  for (;;) {
    if (::flock(fd, op) == 0) return 0;
    if (errno != EINTR) return errno;
  }
}

// Waits until `op | LOCK_NB` succeeds or the token cancels: 0, errno, or ECANCELED;
// EDEADLK with *why set when the probe says the wait cannot end or the deadline passed. Sleeps 1 ms after the
// first refusal, doubling to 100 ms, so a lock let go is taken within 100 ms and a
// waiter costs ~10 wake-ups a second.
int wait_flock_cancellable(const File& meta, int op, const LockWait& wait, const CancelToken& cancel,
                           const std::string& store_path, std::string* why) {
  const int fd = meta.fd();
  int sleep_ms = 1;
  for (;;) {
    if (lock_wait_cancelled(cancel)) return ECANCELED;
    const int err = try_flock(fd, op | LOCK_NB);
    if (err != EWOULDBLOCK) return err;
    if (wait.probe && can_cancel(cancel) && (sleep_ms == 1 || sleep_ms == 100)) {
      *why = wait.probe(fd, store_path);
      if (!why->empty()) return EDEADLK;
    }
    int timeout_ms = sleep_ms;
    if (wait.deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(*wait.deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        *why = "store '" + store_path + "' is still locked by another process after " + wait.timeout_text;
        return EDEADLK;
      }
      timeout_ms = static_cast<int>(std::min<int64_t>(timeout_ms, left.count()));
    }
    pollfd p{cancel.wake_fd, POLLIN, 0};
    (void)::poll(&p, cancel.wake_fd >= 0 ? 1 : 0, timeout_ms);  // EINTR: the check above sees why
    sleep_ms = std::min(sleep_ms * 2, 100);
  }
}

}  // namespace

Status lock_store(const File& meta, LockMode mode, const LockWait& wait, const CancelToken& cancel,
                  const std::string& store_path) {
  const int op = mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH;
  int err = try_flock(meta.fd(), op | LOCK_NB);
  std::string why;
  if (err == EWOULDBLOCK && wait)
    err = can_cancel(cancel) || wait.deadline ? wait_flock_cancellable(meta, op, wait, cancel, store_path, &why)
                                              : try_flock(meta.fd(), op);
  if (err == 0) return Status::ok();
  if (err == EDEADLK && !why.empty()) return Status(StatusCode::kBusy, why);
  if (err == ECANCELED)
    return Status(StatusCode::kCancelled,
                  "interrupted while waiting for the lock on store '" + store_path + "'; nothing was changed");
  if (err == EWOULDBLOCK) {
    // A shared request can only be refused by a writer; an exclusive one by either.
    const char* holder = mode == LockMode::kShared ? "a writer" : "a reader or writer";
    return Status(StatusCode::kBusy, "store '" + store_path + "' is locked by another process (" + holder + ")");
  }
  return errno_status(err, "cannot lock", meta.path());
}

}  // namespace zrec::io
