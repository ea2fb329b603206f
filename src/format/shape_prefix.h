// A Ragged record's shape prefix as stored (docs/format.md §5): its dims as u64, on a
// little-endian host their own bytes, right before the payload.
#pragma once

#include <cstdint>
#include <cstring>

namespace zrec::format {

// Writes the `prefix_bytes` (8 per dimension; 0 for Dense) of `dims` at `out`.
// (Once per record of ~100 bytes when appending lines: ndim 1 is a fixed-size copy the
// compiler inlines, not a call of memcpy.)
inline void put_shape_prefix(uint8_t* out, const uint64_t* dims, uint64_t prefix_bytes) {
  if (prefix_bytes == 8) {
    std::memcpy(out, dims, 8);
  } else if (prefix_bytes > 0) {
    std::memcpy(out, dims, prefix_bytes);
  }
}

}  // namespace zrec::format
