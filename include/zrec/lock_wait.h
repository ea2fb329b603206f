// How a process waits for a store's lock (OpenOptions::wait, WriterOptions::wait): what
// ends the wait early, and what proves it can never end. Process-wide settings, made
// once by a program (the zrec CLI sets both while a command runs).
//
//   zrec::io::set_lock_wait_cancel({&sigint_flag, wake_pipe[0]});
#pragma once

#include <functional>
#include <string>

#include "zrec/cancel.h"
#include "zrec/file.h"

namespace zrec::io {

// What ends a lock wait in this process; a default token (none) restores the plain
// blocking wait. A signal handler that only sets a flag cannot end a flock(2) that
// retries EINTR, nor one entered just after the flag was checked, so a cancellable wait
// polls: LOCK_NB tries, between which it sleeps in poll(2) on the token's wake
// descriptor (a signal wakes it at once). A cancelled wait fails with kCancelled within
// a fraction of a second.
void set_lock_wait_cancel(CancelToken token);

// Asked about every 100 ms while a cancellable wait lasts: a non-empty answer (why the
// wait can never end, e.g. the holder is the process that feeds our stdin) fails the
// wait with kBusy and that message. Empty function: none.
using LockWaitProbe = std::function<std::string(const File& meta, const std::string& store_path)>;
void set_lock_wait_probe(LockWaitProbe probe);

}  // namespace zrec::io
