// flock-based lifetime lock.
#include "io/store_lock.h"

#include <sys/file.h>

#include <cerrno>

namespace zrec::io {

Status lock_store(const File& meta, LockMode mode, bool wait, const std::string& store_path) {
  int op = (mode == LockMode::kExclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB);
  int r;
  do {
    r = ::flock(meta.fd(), op);
  } while (r != 0 && errno == EINTR);
  if (r == 0) return Status::ok();
  if (errno == EWOULDBLOCK) {
    // A shared request can only be refused by a writer; an exclusive one by either.
    const char* holder = mode == LockMode::kShared ? "a writer" : "a reader or writer";
    return Status(StatusCode::kBusy, "store '" + store_path + "' is locked by another process (" +
                                         holder + ")");
  }
  return errno_status(errno, "cannot lock", meta.path());
}

}  // namespace zrec::io
