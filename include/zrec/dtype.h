// NumPy dtypes as zrecord schemas spell them (docs/format.md §4 and §10 "dtype grammar").
// A DType is one scalar type: bool, signed/unsigned ints, floats, complex, fixed-width
// bytes `S<n>`, UCS-4 text `U<n>`, opaque `V<n>`, datetime64/timedelta64 with a unit.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/status.h"

namespace zrec {

enum class DTypeKind : char {
  kBool = 'b',
  kInt = 'i',
  kUInt = 'u',
  kFloat = 'f',
  kComplex = 'c',
  kBytes = 'S',
  kUnicode = 'U',
  kVoid = 'V',
  kDatetime = 'M',
  kTimedelta = 'm',
};

struct DType {
  // '<' little, '>' big, '|' not applicable (one-byte types, S and V), as numpy's dtype.str.
  char byte_order = '|';
  DTypeKind kind = DTypeKind::kUInt;
  uint32_t itemsize = 1;  // bytes per element (U<n>: 4n)
  std::string unit;       // datetime/timedelta only: "" (generic), "ns", "25s", ...

  // The canonical NumPy string (`numpy.dtype.str`), e.g. "|u1", "<f4", "<U8", "<M8[ns]".
  std::string str() const;

  // Size in bytes of one scalar that byte order applies to: itemsize, except
  // complex (two floats: itemsize/2) and U (UCS-4 code units: 4). 1 for S, V, b1.
  uint32_t swap_unit() const;

  // True when values are stored big-endian (byte_order == '>').
  bool big_endian() const { return byte_order == '>'; }

  friend bool operator==(const DType&, const DType&) = default;
};

// Parses a dtype as a user might type it and returns its canonical
// form. Accepts:
//   - canonical strings ("<i4", "|u1", ">f8", "<U8", "|S16", "<M8[ns]", "<m8[25s]");
//   - native or omitted byte order ("=i4", "i4", "f8"), which become '<' on this
//     little-endian host; '<'/'>' on one-byte/S/V types become '|' as in NumPy;
//   - NumPy names: bool, int8..int64, uint8..uint64, float16/32/64, half, single, double,
//     complex64/128, bytesN, strN/unicodeN (as "U<N>"), voidN, datetime64[unit],
//     timedelta64[unit].
// Rejects with kInvalidArgument and a message naming the text and the rule:
// structured/subarray/object dtypes, zero itemsize (S0, U0, V0), long doubles
// (f12, f16, c24, c32), unknown units, anything else.
Result<DType> parse_dtype(std::string_view text);

// The NumPy names parse_dtype accepts as they are (bool, int8, ..., float32, double,
// complex128, datetime64, timedelta64), for shell completion; sized and unit forms
// (bytes5, datetime64[ns]) and the letter grammar are not listed.
std::vector<std::string> numpy_dtype_names();

// Parses a dtype string read from a store schema or a .npy header: it must already be
// canonical (parse_dtype(text)->str() == text). Anything else is kMalformed.
Result<DType> parse_canonical_dtype(std::string_view text);

}  // namespace zrec
