// Little-endian loads and stores (docs/format.md: all integers are little-endian).
// memcpy-based so they are alignment-safe; compilers turn them into plain moves.
#pragma once

#include <cstdint>
#include <cstring>

namespace zrec::format {

template <typename T>
inline T load_le(const uint8_t* p) {
  static_assert(std::is_unsigned_v<T>);
  T v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= static_cast<T>(p[i]) << (8 * i);
  return v;
}

template <typename T>
inline void store_le(uint8_t* p, T v) {
  static_assert(std::is_unsigned_v<T>);
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

}  // namespace zrec::format
