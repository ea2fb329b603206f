// What stops a blocking wait in the library (a read from a pipe, a --wait for a store's
// lock): a flag a signal handler sets, and a descriptor the handler makes readable.
//
//   std::atomic<int> flag;  // set by the handler, which also writes a byte to pipe[1]
//   io::InputStream stream(fd, "pipe", {.cancel = {&flag, pipe[0]}});
#pragma once

#include <atomic>

namespace zrec::io {

// Waits sleep in poll(2) on their descriptor and wake_fd together (the self-pipe
// trick), so a signal that lands after the flag was checked, just before the wait
// would block, still wakes it. Either being set means cancelled.
struct CancelToken {
  const std::atomic<int>* flag = nullptr;  // non-zero: cancelled
  int wake_fd = -1;                        // readable: cancelled; -1: none
};

}  // namespace zrec::io
