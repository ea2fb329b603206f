// Numbers in text as dtype values (see text_numbers.h).
#include "cli/formats/text_numbers.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "zrec/format.h"

namespace zrec::cli {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

std::string quoted(std::string_view token) {
  constexpr size_t kShown = 40;
  if (token.size() <= kShown) return "'" + std::string(token) + "'";
  return "'" + std::string(token.substr(0, kShown)) + "...'";
}

// Stores `bits` (the low `size` bytes of a host value) at out in the dtype's byte order.
void store(uint8_t* out, uint64_t bits, uint32_t size, bool big_endian) {
  for (uint32_t i = 0; i < size; ++i) {
    const uint8_t byte = static_cast<uint8_t>(bits >> (8 * i));
    out[big_endian ? size - 1 - i : i] = byte;
  }
}

Status parse_int(std::string_view token, const DType& dtype, uint8_t* out) {
  std::string_view digits = token;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-') digits.remove_prefix(1);
  const uint32_t bits = dtype.itemsize * 8;
  if (dtype.kind == DTypeKind::kInt) {
    int64_t v = 0;
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    const int64_t lo = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
    const int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    if (end != digits.data() + digits.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
      return invalid_argument(quoted(token) + " is not an integer");
    if (ec == std::errc::result_out_of_range || v < lo || v > hi)
      return invalid_argument(quoted(token) + " is out of range for " + dtype.str() + " (" + std::to_string(lo) + ".." +
                              std::to_string(hi) + ")");
    store(out, static_cast<uint64_t>(v), dtype.itemsize, dtype.big_endian());
    return Status::ok();
  }
  const uint64_t hi = bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
  const std::string range = " is out of range for " + dtype.str() + " (0.." + std::to_string(hi) + ")";
  bool negative = false;
  if (!digits.empty() && digits[0] == '-') {
    negative = true;
    digits.remove_prefix(1);
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || end != digits.data() + digits.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range))
    return invalid_argument(quoted(token) + " is not an integer");
  if (ec == std::errc::result_out_of_range || v > hi || (negative && v != 0))
    return invalid_argument(quoted(token) + range);
  store(out, v, dtype.itemsize, dtype.big_endian());
  return Status::ok();
}

Status parse_float(std::string_view token, const DType& dtype, uint8_t* out) {
  std::string_view text = token;
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (end != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
    return invalid_argument(quoted(token) + " is not a number");
  if (ec == std::errc::result_out_of_range) {
    // from_chars reports underflow and overflow alike; strtod tells them apart.
    const std::string copy(text);
    v = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(v)) return invalid_argument(quoted(token) + " overflows " + dtype.str());
  }
  switch (dtype.itemsize) {
    case 2: {
      const uint16_t h = double_to_half(v);
      if ((h & 0x7fff) == 0x7c00 && !std::isinf(v))
        return invalid_argument(quoted(token) + " overflows " + dtype.str());
      store(out, h, 2, dtype.big_endian());
      break;
    }
    case 4: {
      const float f = static_cast<float>(v);
      if (std::isinf(f) && !std::isinf(v)) return invalid_argument(quoted(token) + " overflows " + dtype.str());
      store(out, std::bit_cast<uint32_t>(f), 4, dtype.big_endian());
      break;
    }
    default:
      store(out, std::bit_cast<uint64_t>(v), 8, dtype.big_endian());
      break;
  }
  return Status::ok();
}

}  // namespace

Status check_number_dtype(NumberSyntax syntax, const DType& dtype) {
  if (syntax == NumberSyntax::kInts) {
    if ((dtype.kind == DTypeKind::kInt || dtype.kind == DTypeKind::kUInt) &&
        (dtype.itemsize == 1 || dtype.itemsize == 2 || dtype.itemsize == 4 || dtype.itemsize == 8))
      return Status::ok();
    return invalid_argument(
        "--parse ints needs a store of an integer dtype (i1..i8 or u1..u8, e.g. <i4); this one is " + dtype.str());
  }
  if (dtype.kind == DTypeKind::kFloat && (dtype.itemsize == 2 || dtype.itemsize == 4 || dtype.itemsize == 8))
    return Status::ok();
  return invalid_argument("--parse floats needs a store of a float dtype (f2, f4 or f8, e.g. <f4); this one is " +
                          dtype.str());
}

uint64_t count_number_tokens(std::string_view text) {
  uint64_t n = 0;
  bool in_token = false;
  for (char c : text) {
    const bool space = is_space(c);
    if (!space && !in_token) ++n;
    in_token = !space;
  }
  return n;
}

Result<uint64_t> parsed_record_bytes(uint64_t count, const DType& dtype) {
  // count <= 2^64 / 8 for any text that fits in memory, but refuse before multiplying.
  if (count > kMaxRagged1dPayloadBytes / dtype.itemsize)
    return invalid_argument(
        std::to_string(count) + " numbers of " + dtype.str() + " are " +
        (count > UINT64_MAX / dtype.itemsize ? "more than 2^64" : std::to_string(count * dtype.itemsize)) +
        " bytes; a record holds at most " + std::to_string(kMaxRagged1dPayloadBytes));
  return count * dtype.itemsize;
}

Status parse_numbers(std::string_view text, NumberSyntax syntax, const DType& dtype, uint8_t* out) {
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_space(text[i])) ++i;
    if (i == text.size()) break;
    size_t j = i;
    while (j < text.size() && !is_space(text[j])) ++j;
    const std::string_view token = text.substr(i, j - i);
    ZREC_RETURN_IF_ERROR(syntax == NumberSyntax::kInts ? parse_int(token, dtype, out) : parse_float(token, dtype, out));
    out += dtype.itemsize;
    i = j;
  }
  return Status::ok();
}

uint16_t double_to_half(double value) {
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  if (std::isnan(value)) return sign | 0x7e00;
  const double a = std::fabs(value);
  if (std::isinf(a)) return sign | 0x7c00;
  int exp2 = 0;
  std::frexp(a, &exp2);  // a = m * 2^exp2, m in [0.5, 1)
  int e = exp2 - 1;      // a = 1.f * 2^e
  if (a == 0) return sign;
  if (e < -14) {
    // Subnormal: units of 2^-24. A result of 1024 is the smallest normal, whose bits
    // are exactly 0x0400, so no special case is needed.
    const double q = std::nearbyint(std::ldexp(a, 24));  // the default mode rounds half to even
    return sign | static_cast<uint16_t>(q);
  }
  double q = std::nearbyint(std::ldexp(a, 10 - e));  // in [1024, 2048]
  if (q == 2048) {
    q = 1024;
    ++e;
  }
  if (e > 15) return sign | 0x7c00;
  return sign | static_cast<uint16_t>(((e + 15) << 10) | (static_cast<uint16_t>(q) - 1024));
}

}  // namespace zrec::cli
