// A library that reads a memory-mapped file trusts the offsets and sizes the file holds:
// LMDB follows a damaged node's offset up to 128 KiB past its page, and an access
// beyond the end of the mapped file is SIGBUS (past the mapping, SIGSEGV), which would
// kill zrec in the middle of LMDB's own code, where no check of ours can come first.
// A MapFaultGuard turns such a fault, raised while the calling thread runs one guarded
// call, into a false return, so the command fails with a message instead. Faults
// anywhere else (another thread, outside a guarded call) keep their default action.
//
//   MapFaultGuard guard;  // installs the handlers; the destructor restores the old ones
//   int rc;
//   if (!guard.run([&] { rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT); }))
//     return malformed("... damaged ...");
//
// The guarded call must be C code that holds no lock and owns no allocation across the
// fault (LMDB's read-only cursor calls): it is left by siglongjmp, and the caller must
// not use the state it was working on again (close the transaction instead).
#pragma once

#include <csetjmp>
#include <functional>

#include "cli/os/signal_handlers.h"

namespace zrec::cli {

class MapFaultGuard {
 public:
  MapFaultGuard();

  // Runs `call`; false when it raised SIGBUS or SIGSEGV (and was abandoned there).
  bool run(const std::function<void()>& call);

 private:
  SignalHandlers::Scope scope_;
};

}  // namespace zrec::cli
