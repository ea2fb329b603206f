// Turns a gather list of many small buffers into a few large writes. A pwritev with one
// iovec per tiny record (raw appends of text lines, token records, copied frames of a
// few dozen bytes) spends its time walking iovecs in the kernel; copying the small
// buffers into one contiguous scratch block is cheaper than that. Large buffers stay
// referenced where they are, so big records are still written without a copy.
#pragma once

#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zrec::io {

// Buffers shorter than this are copied into scratch; longer ones are written in place.
inline constexpr size_t kCopyBelowBytes = 4096;

// Rewrites iov so that each run of adjacent buffers shorter than copy_below becomes one
// iovec pointing into `scratch` (resized as needed; its previous contents are dropped).
// The bytes iov describes, in order, are unchanged. scratch must outlive the write.
void pack_small_iovecs(std::vector<iovec>& iov, std::vector<uint8_t>& scratch, size_t copy_below = kCopyBelowBytes);

}  // namespace zrec::io
