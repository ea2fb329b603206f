// Little-endian loads and stores (docs/format.md: all integers are little-endian).
// Byte by byte, so they are alignment-safe and independent of the host's byte order;
// compilers turn the loops into plain moves on little-endian machines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

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
