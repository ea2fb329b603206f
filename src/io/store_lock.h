// The lifetime lock of a store (docs/format.md §7, §10): flock on meta.zr, exclusive for a
// writer, shared for a reader. Released when the descriptor closes.
#pragma once

#include <functional>
#include <string>

#include "io/file.h"
#include "io/input_stream.h"

namespace zrec::io {

enum class LockMode { kShared, kExclusive };

// Takes the lock on `meta` (an open meta.zr). Without `wait`, a held lock fails at
// once with kBusy: "store 'x' is locked by another process (a writer)" / "(readers)".
// With `wait` it blocks until the holder lets go, or until the token given to
// set_lock_wait_cancel() says cancelled: then kCancelled, within a fraction of a second.
Status lock_store(const File& meta, LockMode mode, bool wait, const std::string& store_path);

// What ends a lock wait in this process (the CLI's SIGINT/SIGTERM token while a command
// runs); a default token (none) restores the plain blocking wait. A signal handler that
// only sets a flag cannot end a flock(2) that retries EINTR, nor one entered just after
// the flag was checked, so a cancellable wait polls: LOCK_NB tries, between which it
// sleeps in poll(2) on the token's wake descriptor (a signal wakes it at once).
void set_lock_wait_cancel(CancelToken token);

// Asked about every 100 ms while a cancellable wait lasts: a non-empty answer (why the
// wait can never end, e.g. the holder is the process that feeds our stdin) fails the
// wait with kBusy and that message. Empty function: none.
using LockWaitProbe = std::function<std::string(const File& meta, const std::string& store_path)>;
void set_lock_wait_probe(LockWaitProbe probe);

}  // namespace zrec::io
