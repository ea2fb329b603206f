// --resume-file F: --from-length that a script need not remember. The first run writes
// F holding the store's (root's) length, read under the writer's lock before anything
// is appended; every later run of the same command line reads it back as its
// --from-length. So the same script rerun after a kill at any point, or after it
// completed, appends each record of its input exactly once: the records already there
// are found present (and compared, where the input is read anyway). F stays after a
// successful run for that reason; remove it to append the same input once more.
#pragma once

#include <cstdint>
#include <string>

#include "zrec/status.h"

namespace zrec::cli {

// The --from-length that `path` holds, or, when there is no such file, `length` (the
// store's, under its lock) after writing it to `path` durably (a temporary beside it,
// synced, renamed over it, the directory synced). A file that holds anything but one
// decimal length and a newline is refused, naming it, and so is anything but a regular
// file (cli/os/side_file.h), and a `path` inside `store` (the store or root appended to:
// cli/os/output_guard.h), whether or not it exists.
Result<uint64_t> resume_from(const std::string& path, uint64_t length, const std::string& store);

}  // namespace zrec::cli
