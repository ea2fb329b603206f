// How an operation waits for a store's lock that another process holds (the `wait` of
// OpenOptions, WriterOptions, VerifyOptions, JoinOptions and of the calls that lock a
// store): whether it waits at all, what ends the wait early, and what proves it can
// never end. A value in the options, as LevelDB's Env rides in its Options: nothing
// about waiting is process-wide.
//
//   zrec::OpenOptions o;
//   o.wait = true;                                  // block until the holder lets go
//   o.wait.control.cancel = {&sigint_flag, wake_pipe[0]};  // ... or until a signal arrives
#pragma once

#include <functional>
#include <string>

#include "zrec/control.h"
#include "zrec/file.h"

namespace zrec::io {

// Asked about every 100 ms while a cancellable wait lasts: a non-empty answer (why the
// wait can never end, e.g. the holder is the process that feeds our stdin) fails the
// wait with kBusy and that message.
using LockWaitProbe = std::function<std::string(const File& meta, const std::string& store_path)>;

struct LockWait {
  LockWait(bool block = false) : block(block) {}  // implicit: `options.wait = true`

  // False: a held lock fails at once with kBusy. True: wait for the holder.
  bool block = false;
  // The wait's own Control (zrec/control.h): its cancel token ends the wait early
  // (kCancelled); a default token (none): a plain blocking wait. A wait reports no
  // progress. A signal handler that only sets a flag cannot end a flock(2) that
  // retries EINTR, nor one entered just after the flag was checked, so a cancellable
  // wait polls: LOCK_NB tries, between which it sleeps in poll(2) on the token's wake
  // descriptor (a signal wakes it at once). A cancelled wait fails within a fraction
  // of a second. The operation that waits may have a Control of its own (a verify's);
  // the CLI gives both the same token.
  Control control;
  // Empty: none. Asked only while a cancellable wait lasts (control.cancel set).
  LockWaitProbe probe;

  explicit operator bool() const { return block; }
};

}  // namespace zrec::io
