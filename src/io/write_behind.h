// Write-behind: written bytes start going to the disk while the next ones are prepared,
// instead of all at once in the fsync that makes them durable, which then finds little
// left to wait for (a copy ends up near `cp -r; sync`). It is no durability barrier:
// that stays the fsync's.
#pragma once

#include <cstdint>

#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::io {

// Once [from, end) holds at least kWriteBehindBytes, starts writing back its whole pages
// (File::start_writeback) and moves `from` to the end of the last of them; else does
// nothing. Only whole pages, and only in large batches: the next write into a page under
// writeback waits for the disk (stable pages), and a call per small write cost a third
// of a run of tiny zstd records.
inline constexpr uint64_t kWriteBehindBytes = uint64_t{8} << 20;
Status write_behind(const File& file, uint64_t& from, uint64_t end);

}  // namespace zrec::io
