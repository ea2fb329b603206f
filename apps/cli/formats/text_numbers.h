// Whitespace-separated numbers in a line of text, as a store's numeric dtype:
// `append-stream --parse ints|floats` turns each line a tokenizer or a script prints
// ("17 4021 9 12") into one 1-D record. An input format of the CLI, so it lives in apps/.
#pragma once

#include <cstdint>
#include <string_view>

#include "zrec/dtype.h"
#include "zrec/status.h"

namespace zrec::cli {

enum class NumberSyntax { kInts, kFloats };

// Checks that values parsed as `syntax` can be stored as `dtype`: kInts needs a signed
// or unsigned integer dtype (i1..i8, u1..u8), kFloats a float one (f2, f4, f8), in
// either byte order. kInvalidArgument otherwise, saying which dtypes fit.
Status check_number_dtype(NumberSyntax syntax, const DType& dtype);

// Number of whitespace-separated tokens (space, tab, CR, LF, VT, FF separate them).
uint64_t count_number_tokens(std::string_view text);

// The payload bytes of a 1-D record of `count` numbers of `dtype`; kInvalidArgument
// "COUNT numbers of DTYPE are BYTES bytes; a record holds at most MAX" beyond what a
// Ragged 1-D record holds. Text parsed into numbers grows (a 2-byte token "1 " is 8
// bytes of <i8): every --parse checks its record's parsed size here before it makes
// room for it, not only the size of the text.
Result<uint64_t> parsed_record_bytes(uint64_t count, const DType& dtype);

// Parses the tokens of `text` into `out` (count_number_tokens(text) * itemsize bytes),
// each as one `dtype` value in its byte order. Integers: optional sign, decimal digits.
// Floats: what strtod reads in the C locale, minus hex floats: 1, -2.5, 1e-3, inf, nan.
// Errors are kInvalidArgument and quote the token: "'12x' is not an integer",
// "'300' is out of range for |u1 (0..255)", "'1e39' overflows <f4". A float too small
// for the dtype becomes 0 or a subnormal, as in NumPy; only overflow is an error.
// Requires check_number_dtype(syntax, dtype) to be ok.
Status parse_numbers(std::string_view text, NumberSyntax syntax, const DType& dtype, uint8_t* out);

// The IEEE half-precision bits nearest to `value` (round half to even); values that
// round beyond 65504 become infinities. Exposed for tests.
uint16_t double_to_half(double value);

}  // namespace zrec::cli
