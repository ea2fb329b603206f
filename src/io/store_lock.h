// The lifetime lock of a store (docs/format.md §7, §10): flock on meta.zr, exclusive for a
// writer, shared for a reader. Released when the descriptor closes.
#pragma once

#include <string>

#include "zrec/context.h"

#include "zrec_support/file.h"

namespace zrec::io {

enum class LockMode { kShared, kExclusive };

// Takes the lock on `meta` (an open meta.zr). Without `wait`, a held lock fails at
// once with kBusy: "store 'x' is locked by another process (a writer)" / "(readers)".
// With `wait` it blocks until the holder lets go, or until `cancel` (the operation's
// Context::control.cancel) says cancelled (kCancelled), wait.deadline passes or
// wait.probe says the wait can never end (kBusy): zrec/context.h.
Status lock_store(const File& meta, LockMode mode, const LockWait& wait, const CancelToken& cancel,
                  const std::string& store_path);

}  // namespace zrec::io
