// SIGINT and SIGTERM as a request to stop, in one place. A long-running command holds
// an InterruptScope for its duration: the handlers only record the signal, the
// command checks interrupted() between units of work (and io::InputStream notices it
// in a blocked read), then winds down cleanly: it aborts what is not yet published,
// says where the store stands, and exits 128 + the signal (130 for SIGINT, 143 for
// SIGTERM), as a shell reports a process killed by that signal.
#pragma once

#include <signal.h>

#include <atomic>
#include <string>

#include "zrec/status.h"

#include "cli/os/signal_handlers.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

// Installs handlers for SIGINT and SIGTERM that record the signal number and nothing
// else, and restores the previous dispositions on destruction. The handlers are
// installed without SA_RESTART, so a wait blocked on a pipe returns EINTR and the
// stream sees the flag at once; they also write a byte to a self-pipe, which wakes a
// stream that checked the flag just before the signal (interrupt_token()). While a
// scope lives, a --wait for a store's lock ends on the signal too (kCancelled: the
// token is every Context's control.cancel, GlobalOptions::context). An inner
// scope inside a live one changes nothing, so a short one may guard a wait (opening a
// store) in a command that otherwise keeps the default dispositions. The outermost
// clears any signal recorded by an earlier scope.
class InterruptScope {
 public:
  InterruptScope();

 private:
  SignalHandlers::Scope scope_;
};

// The first signal recorded since the last InterruptScope began; 0 when none.
// Async-signal-safe to read; cheap enough to check per record.
int interrupt_signal();
inline bool interrupted() { return interrupt_signal() != 0; }

// The flag and the self-pipe, for a Control's cancel (zrec/context.h: every long
// operation's, an io::InputStream's, a lock wait's): loops stop between units of work,
// reads and waits when a signal arrives, wherever it lands.
CancelToken interrupt_token();

// The exit status for a command stopped by a signal: 128 + the signal recorded
// (130 for SIGINT, 143 for SIGTERM), or 130 when none was (a kCancelled from elsewhere).
int interrupt_exit_code();

// kCancelled with `message`, for a command that stops because interrupted() is true.
Status cancelled(std::string message);

}  // namespace zrec::cli
