// The lock-wait token zrec uses outside an InterruptScope (interrupt.h). Nothing
// cancels it, but a lock wait with a token polls, and a polling wait asks the lock-wait
// probe (app.cc: our own pipe's writer holds the store, or --wait=SECONDS ran out), so
// the probe is asked in every command, also while an append waits for its store before
// its signal handlers are in.
#pragma once

#include "zrec/cancel.h"

namespace zrec::cli {

io::CancelToken idle_lock_wait_token();

}  // namespace zrec::cli
