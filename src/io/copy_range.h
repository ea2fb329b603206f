// Copying a byte range from one file into another at given offsets, kernel-side where
// the kernel can: copy_file_range(2) (no copy through user memory; a reflink where the
// file system shares extents), else pread/pwrite through a bounded buffer.
#pragma once

#include <cstdint>
#include <string>

#include "zrec/file.h"
#include "zrec/status.h"

namespace zrec::io {

// Copies n bytes of `in` (descriptor in_fd, named in_name in messages) at in_offset to
// `out` at out_offset. Falls back to pread/pwrite when copy_file_range is refused
// (EXDEV, ENOSYS, EOPNOTSUPP, EINVAL, ...) and from then on for the whole process.
// EINTR is retried. A source shorter than expected is kIoError naming it.
Status copy_range(int in_fd, const std::string& in_name, uint64_t in_offset, const File& out, uint64_t out_offset,
                  uint64_t n);

}  // namespace zrec::io
