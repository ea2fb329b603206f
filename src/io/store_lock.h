// The lifetime lock of a store (docs/format.md §7, §10): flock on meta.zr, exclusive for a
// writer, shared for a reader. Released when the descriptor closes.
#pragma once

#include <string>

#include "zrec/file.h"
#include "zrec/lock_wait.h"

namespace zrec::io {

enum class LockMode { kShared, kExclusive };

// Takes the lock on `meta` (an open meta.zr). Without `wait`, a held lock fails at
// once with kBusy: "store 'x' is locked by another process (a writer)" / "(readers)".
// With `wait` it blocks until the holder lets go, or until the token given to
// set_lock_wait_cancel() (zrec/lock_wait.h) says cancelled: then kCancelled.
Status lock_store(const File& meta, LockMode mode, bool wait, const std::string& store_path);

// set_lock_wait_cancel / set_lock_wait_probe: zrec/lock_wait.h.

}  // namespace zrec::io
