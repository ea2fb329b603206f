// Copying a byte range from one file into another at given offsets, kernel-side where
// the kernel can: copy_file_range(2) (no copy through user memory; a reflink where the
// file system shares extents), else pread/pwrite through a bounded buffer; and
// clone_range(), which first asks for a reflink outright (FICLONERANGE).
#pragma once

#include <cstdint>
#include <string>

#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::io {

// How the bytes of a copy went: shared by a reflink, copied kernel-side
// (copy_file_range), or through a buffer (the fallback).
struct CopyCounts {
  uint64_t cloned = 0;
  uint64_t kernel = 0;
  uint64_t buffered = 0;
};

// Copies n bytes of `in` (descriptor in_fd, named in_name in messages) at in_offset to
// `out` at out_offset. Falls back to pread/pwrite when copy_file_range is refused
// (EXDEV, ENOSYS, EOPNOTSUPP, EINVAL, ...) and from then on for the whole process.
// EINTR is retried. A source shorter than expected is kIoError naming it. Adds to
// *counts when given.
Status copy_range(int in_fd, const std::string& in_name, uint64_t in_offset, const File& out, uint64_t out_offset,
                  uint64_t n, CopyCounts* counts = nullptr);

// copy_range(), except that the whole blocks of the range are first shared with a
// reflink (ioctl FICLONERANGE: XFS, Btrfs, OCFS2, NFS 4.2 servers that have them) when
// both offsets start a block of `out`'s file system; a partial last block, and anything
// the file system refuses to clone (EOPNOTSUPP, EXDEV, ... : from then on for the whole
// process; EINVAL: for this call), goes through copy_range. Cloned bytes cost no data
// copy and no space until either file changes them.
Status clone_range(int in_fd, const std::string& in_name, uint64_t in_offset, const File& out, uint64_t out_offset,
                   uint64_t n, CopyCounts* counts = nullptr);

}  // namespace zrec::io
