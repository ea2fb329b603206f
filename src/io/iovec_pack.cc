#include "io/iovec_pack.h"

#include <cstring>

namespace zrec::io {

void pack_small_iovecs(std::vector<iovec>& iov, std::vector<uint8_t>& scratch, size_t copy_below) {
  // First pass: how much will be copied, so scratch is sized once and never moves
  // while iovecs point into it.
  size_t small_bytes = 0;
  size_t small_count = 0;
  for (const iovec& v : iov) {
    if (v.iov_len < copy_below) {
      small_bytes += v.iov_len;
      ++small_count;
    }
  }
  if (small_count < 2) return;  // nothing to merge
  if (scratch.size() < small_bytes) scratch.resize(small_bytes);

  size_t out = 0;  // iovecs kept, compacted in place
  size_t used = 0;
  bool in_run = false;  // iov[out - 1] is a run in scratch still open for appending
  for (size_t i = 0; i < iov.size(); ++i) {
    const iovec v = iov[i];
    if (v.iov_len >= copy_below) {
      iov[out++] = v;
      in_run = false;
      continue;
    }
    if (v.iov_len > 0) std::memcpy(scratch.data() + used, v.iov_base, v.iov_len);
    if (in_run) {
      iov[out - 1].iov_len += v.iov_len;
    } else {
      iov[out++] = iovec{scratch.data() + used, v.iov_len};
      in_run = true;
    }
    used += v.iov_len;
  }
  iov.resize(out);
}

}  // namespace zrec::io
