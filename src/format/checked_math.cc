// Overflow-checked sizes (docs/format.md §10 "Dimensions"): a product that does not fit in
// 64 bits makes a schema, a record or a .npy header invalid; it must never wrap.
#include <cstdint>
#include <optional>
#include <span>

#include "zrec/schema.h"

namespace zrec {

std::optional<uint64_t> checked_volume(std::span<const uint64_t> dims, uint64_t itemsize) {
  uint64_t volume = itemsize;
  for (uint64_t d : dims) {
    if (__builtin_mul_overflow(volume, d, &volume)) return std::nullopt;
  }
  return volume;
}

}  // namespace zrec
