// `zrec cat --format npy a/ | zrec --wait append-npy a/ -`: the reader holds a's lock
// while it writes into the pipe, the appender waits for the lock before it reads the
// pipe; once the pipe is full neither can move. A --wait that can only end when a
// process connected to us by a pipe lets go would never end, so it is refused.
#pragma once

#include <string>

namespace zrec::cli {

// For LockWait::probe (the wait of GlobalOptions::context): why waiting for the lock of the
// meta.zr open as `meta_fd` would never end, or "". Finds the processes holding a lock
// on its inode in /proc/locks and looks for our stdin's or stdout's pipe among their
// descriptors (/proc/PID/fd). A chain through a third process (a | gzip | gunzip | b)
// is not seen; without /proc nothing is.
std::string pipe_deadlock(int meta_fd, const std::string& store_path);

}  // namespace zrec::cli
