// Renders one record as JSON (`cat --format jsonl`) or NumPy-like text (`--format text`).
//
// Choices where numpy's own printing is not followed exactly:
//   - text floats are spelled like Python's repr of each value ("[1.0 2.5]", not numpy's
//     column-aligned "[1.  2.5]"); no line wrapping at 75 columns, no "..." summarizing;
//   - floats (text and JSON) use the shortest digits that round-trip in the element's own
//     precision, as numpy prints them: float32 0.1 is "0.1" (tolist() would give
//     0.10000000149011612), float16 65504 is "65500.0";
//   - text complex values have no parentheses and no forced ".0": "1+2j", "1.5-0j";
//   - text datetimes are unquoted ISO 8601 in the unit's base resolution ("[25s]" counts
//     print as seconds); years outside 0..9999 print as numpy does ("-001", "11963");
//   - text timedeltas are "<n> <unit>" ("3 s", "3 25s"); text void values are "0x" + hex.
#include "cli/formats/record_format.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <iterator>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cli/formats/json_string.h"

namespace zrec::cli {
namespace {

using Int128 = __int128;  // datetime arithmetic: count * multiplier * ticks never overflows it

// ---- loading scalars -------------------------------------------------------------------

// Reads an unsigned integer of `size` (1..8) bytes stored in the given byte order.
uint64_t load_unsigned(const uint8_t* p, uint32_t size, bool big) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < size; ++i) v |= uint64_t(p[big ? size - 1 - i : i]) << (8 * i);
  return v;
}

int64_t load_signed(const uint8_t* p, uint32_t size, bool big) {
  const unsigned shift = 64 - 8 * size;
  return int64_t(load_unsigned(p, size, big) << shift) >> shift;  // sign-extends
}

// Magnitude of the low 15 bits of a float16 read as a finite number. 0x7c00 (infinity)
// reads as 65536, the value the exponent pattern continues to, so that the midpoint
// above 65504 is where rounding to infinity begins.
double half_magnitude(uint32_t m) {
  const uint32_t exponent = m >> 10, fraction = m & 0x3ff;
  if (exponent == 0) return std::ldexp(double(fraction), -24);  // subnormal
  return std::ldexp(double(fraction + 1024), int(exponent) - 25);
}

double half_to_double(uint16_t bits) {
  const uint32_t m = bits & 0x7fff;
  const double v = m < 0x7c00 ? half_magnitude(m) : m == 0x7c00 ? INFINITY : NAN;
  return bits & 0x8000 ? -v : v;
}

// Returns the double nearest the shortest decimal that reads back as the same float16
// (what numpy prints), so that fmt's shortest double output spells exactly those digits.
// A decimal reads back as `m` when it lies strictly between the midpoints to its
// neighbours, or on one of them when m's last bit is even (round half to even).
double shortest_half(uint16_t bits) {
  const uint32_t m = bits & 0x7fff;
  if (m == 0 || m >= 0x7c00) return half_to_double(bits);
  const double x = half_magnitude(m);
  const double low = (half_magnitude(m - 1) + x) / 2, high = (x + half_magnitude(m + 1)) / 2;
  const bool even = (m & 1) == 0;
  for (int digits = 1; digits <= 5; ++digits) {  // 5 significant digits always round-trip
    // The nearest decimal of this many digits, "d.dddde-XX", as an integer and exponent.
    std::string s = fmt::format("{:.{}e}", x, digits - 1);
    const size_t e = s.find('e');
    const int exponent = std::stoi(s.substr(e + 1)) - (digits - 1);
    s.erase(e);
    if (digits > 1) s.erase(1, 1);  // the '.'
    const int64_t mantissa = std::stoll(s);
    // Next to a power of two the interval is lopsided, so the nearest can miss it while
    // its neighbour one unit away still fits (0.015625 prints as 0.01563).
    for (const int64_t delta : {0, 1, -1}) {
      const std::string candidate_text = fmt::format("{}e{}", mantissa + delta, exponent);
      double candidate = 0;
      std::from_chars(candidate_text.data(), candidate_text.data() + candidate_text.size(), candidate);
      if ((low < candidate && candidate < high) || (even && (candidate == low || candidate == high))) {
        return bits & 0x8000 ? -candidate : candidate;
      }
    }
  }
  return half_to_double(bits);
}

// Shortest round-trip spelling of a float of `size` bytes in its own precision, as fmt
// writes it ("1", "2.5", "1e+20"), or "nan", "inf", "-inf".
std::string float_repr(const uint8_t* p, uint32_t size, bool big) {
  const uint64_t bits = load_unsigned(p, size, big);
  std::string s;
  auto it = std::back_inserter(s);
  if (size == 2) {
    if (std::isnan(half_to_double(uint16_t(bits)))) return "nan";  // fmt would write "-nan"
    fmt::format_to(it, "{}", shortest_half(uint16_t(bits)));
  } else if (size == 4) {
    const float f = std::bit_cast<float>(uint32_t(bits));
    if (std::isnan(f)) return "nan";
    fmt::format_to(it, "{}", f);
  } else {
    const double d = std::bit_cast<double>(bits);
    if (std::isnan(d)) return "nan";
    fmt::format_to(it, "{}", d);
  }
  return s;
}

// Python's repr of a float: integral values keep a ".0" so they still read as floats.
void append_float_text(std::string& out, const std::string& repr) {
  out += repr;
  if (repr.find_first_of(".eni") == std::string::npos) out += ".0";  // "nan"/"inf" have n
}

// Python's json module spelling: NaN, Infinity, -Infinity, otherwise as repr.
void append_float_json(std::string& out, const std::string& repr) {
  if (repr == "nan") out += "NaN";
  else if (repr == "inf") out += "Infinity";
  else if (repr == "-inf") out += "-Infinity";
  else append_float_text(out, repr);
}

// ---- strings ----------------------------------------------------------------------------

// The characters of an S (bytes) or U (UCS-4) element with trailing NULs stripped, as
// numpy does. Invalid U code points (surrogates, > U+10FFFF) become U+FFFD.
std::vector<uint32_t> load_chars(const DType& dtype, const uint8_t* p) {
  std::vector<uint32_t> chars;
  if (dtype.kind == DTypeKind::kBytes) {
    chars.assign(p, p + dtype.itemsize);
  } else {
    for (uint32_t i = 0; i + 4 <= dtype.itemsize; i += 4) {
      const uint32_t c = uint32_t(load_unsigned(p + i, 4, dtype.big_endian()));
      chars.push_back(c > 0x10ffff || (c >= 0xd800 && c < 0xe000) ? 0xfffd : c);
    }
  }
  while (!chars.empty() && chars.back() == 0) chars.pop_back();
  return chars;
}

// A JSON string. Bytes (S) are read as latin-1, so those >= 0x80 become \u00XX;
// text (U) is written as UTF-8.
void append_json_chars(std::string& out, const std::vector<uint32_t>& chars, bool bytes) {
  out += '"';
  for (uint32_t c : chars) {
    if (bytes && c >= 0x80) fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
    else append_json_char(out, c);
  }
  out += '"';
}

// Python's repr of bytes (b'..') or str ('..'): single quotes unless the text holds a
// single quote and no double quote; \\, the quote, \t \n \r and non-printable
// characters escaped (for str, only the C0/C1 controls and DEL are treated as such).
void append_python_string(std::string& out, const std::vector<uint32_t>& chars, bool bytes) {
  const bool has_single = std::find(chars.begin(), chars.end(), '\'') != chars.end();
  const bool has_double = std::find(chars.begin(), chars.end(), '"') != chars.end();
  const char quote = has_single && !has_double ? '"' : '\'';
  if (bytes) out += 'b';
  out += quote;
  for (uint32_t c : chars) {
    if (c == uint32_t(quote) || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || (c >= 0x7f && (bytes || c < 0xa0))) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", c);
    } else {
      append_utf8(out, c);
    }
  }
  out += quote;
}

void append_hex(std::string& out, const uint8_t* p, uint32_t size) {
  for (uint32_t i = 0; i < size; ++i) fmt::format_to(std::back_inserter(out), "{:02x}", p[i]);
}

// ---- datetime64 / timedelta64 -----------------------------------------------------------

constexpr int64_t kNaT = INT64_MIN;

struct TimeUnit {
  int64_t multiplier = 1;  // the 25 of "25s"
  std::string_view base;   // "s"; "" for generic units
};

TimeUnit split_unit(std::string_view unit) {
  TimeUnit u;
  const auto [rest, ec] = std::from_chars(unit.data(), unit.data() + unit.size(), u.multiplier);
  if (ec != std::errc()) u.multiplier = 1;
  u.base = unit.substr(size_t(rest - unit.data()));
  return u;
}

// How a unit finer than a month is laid out: ticks per day and the clock fields shown.
struct ClockUnit {
  std::string_view base;
  int64_t days_per_tick;  // 7 for W, else 1
  Int128 ticks_per_day;   // 1 for D and W
  int clock_fields;       // 0 date only, 1 hours, 2 minutes, 3 seconds
  int fraction_digits;    // digits after the seconds' decimal point
};

const ClockUnit* find_clock_unit(std::string_view base) {
  constexpr Int128 kSecondsPerDay = 86400;
  static const ClockUnit kUnits[] = {
      {"W", 7, 1, 0, 0},
      {"D", 1, 1, 0, 0},
      {"h", 1, 24, 1, 0},
      {"m", 1, 24 * 60, 2, 0},
      {"s", 1, kSecondsPerDay, 3, 0},
      {"ms", 1, kSecondsPerDay * 1000, 3, 3},
      {"us", 1, kSecondsPerDay * 1000000, 3, 6},
      {"ns", 1, kSecondsPerDay * 1000000000, 3, 9},
      {"ps", 1, kSecondsPerDay * 1000000000000, 3, 12},
      {"fs", 1, kSecondsPerDay * 1000000000000000, 3, 15},
      {"as", 1, kSecondsPerDay * 1000000000000000000, 3, 18},
  };
  for (const ClockUnit& u : kUnits) {
    if (u.base == base) return &u;
  }
  return nullptr;
}

Int128 floor_div(Int128 a, Int128 b) {
  const Int128 q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

struct CivilDate {
  Int128 year;
  unsigned month, day;
};

// Howard Hinnant's civil_from_days: proleptic Gregorian date of days since 1970-01-01.
// In 128 bits so that any int64 count of any unit (multiplier <= INT32_MAX) fits.
CivilDate civil_from_days(Int128 days) {
  const Int128 z = days + 719468;
  const Int128 era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = unsigned(z - era * 146097);                             // [0, 146096]
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;  // [0, 399]
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);                // [0, 365]
  const unsigned mp = (5 * doy + 2) / 153;                                     // [0, 11]
  const unsigned month = mp < 10 ? mp + 3 : mp - 9;
  return {yoe + era * 400 + (month <= 2), month, doy - (153 * mp + 2) / 5 + 1};
}

// ISO 8601 text of a non-NaT datetime64 count; false when the unit is generic or unknown,
// and the caller shows the bare count instead. Years are at least 4 digits with the
// sign counted, as numpy writes them ("-001", "0053", "11963").
bool append_iso_datetime(std::string& out, int64_t count, std::string_view unit) {
  const TimeUnit u = split_unit(unit);
  const ClockUnit* c = find_clock_unit(u.base);
  // numpy keeps multipliers in an int; a larger one could overflow the 128-bit math below.
  if (u.multiplier <= 0 || u.multiplier > INT32_MAX) return false;
  if (c == nullptr && u.base != "Y" && u.base != "M") return false;
  const Int128 total = Int128(count) * u.multiplier;  // < 2^94
  auto it = std::back_inserter(out);
  if (c == nullptr) {  // calendar units
    const Int128 years = u.base == "Y" ? total : floor_div(total, 12);
    fmt::format_to(it, "{:04}", 1970 + years);
    if (u.base == "M") fmt::format_to(it, "-{:02}", int(total - years * 12) + 1);
    return true;
  }
  const Int128 day_index = floor_div(total, c->ticks_per_day);
  const CivilDate date = civil_from_days(day_index * c->days_per_tick);
  fmt::format_to(it, "{:04}-{:02}-{:02}", date.year, date.month, date.day);
  if (c->clock_fields == 0) return true;
  // Ticks into the day, split into hours, minutes, seconds and the fraction.
  const Int128 ticks = total - day_index * c->ticks_per_day;
  const Int128 ticks_per_hour = c->ticks_per_day / 24;
  fmt::format_to(it, "T{:02}", int(ticks / ticks_per_hour));
  if (c->clock_fields == 1) return true;
  const Int128 ticks_per_minute = ticks_per_hour / 60;
  fmt::format_to(it, ":{:02}", int(ticks % ticks_per_hour / ticks_per_minute));
  if (c->clock_fields == 2) return true;
  const Int128 ticks_per_second = ticks_per_minute / 60;
  fmt::format_to(it, ":{:02}", int(ticks % ticks_per_minute / ticks_per_second));
  if (c->fraction_digits > 0) {
    // At most 10^18 ticks per second, so the fraction fits in a uint64.
    fmt::format_to(it, ".{:0{}}", uint64_t(ticks % ticks_per_second), c->fraction_digits);
  }
  return true;
}

// ---- elements ----------------------------------------------------------------------------

// Whether the element size is one the scalar kinds can be decoded at; anything else
// (which parse_dtype never produces) is shown as hex rather than misread.
bool decodable(const DType& dtype) {
  const uint32_t n = dtype.itemsize;
  switch (dtype.kind) {
    case DTypeKind::kBool:
      return n == 1;
    case DTypeKind::kInt:
    case DTypeKind::kUInt:
      return n == 1 || n == 2 || n == 4 || n == 8;
    case DTypeKind::kFloat:
      return n == 2 || n == 4 || n == 8;
    case DTypeKind::kComplex:
      return n == 8 || n == 16;
    case DTypeKind::kDatetime:
    case DTypeKind::kTimedelta:
      return n == 8;
    case DTypeKind::kUnicode:
      return n % 4 == 0;
    case DTypeKind::kBytes:
    case DTypeKind::kVoid:
      return true;
  }
  return false;
}

// How one output format spells each kind of element; append_element decodes, the
// spelling only writes.
struct Spelling {  // in this order in kJsonSpelling and kTextSpelling
  const char* true_word;
  const char* false_word;
  void (*real)(std::string& out, const std::string& repr);
  void (*complex)(std::string& out, const std::string& re, const std::string& im);
  void (*chars)(std::string& out, const std::vector<uint32_t>& chars, bool bytes);
  void (*opaque)(std::string& out, const uint8_t* p, uint32_t size);
  void (*time)(std::string& out, const DType& dtype, int64_t count);
};

// JSON: numbers, strings, [re, im] for complex, null for NaT.
void append_json_complex(std::string& out, const std::string& re, const std::string& im) {
  out += '[';
  append_float_json(out, re);
  out += ',';
  append_float_json(out, im);
  out += ']';
}

void append_json_opaque(std::string& out, const uint8_t* p, uint32_t size) {
  out += '"';
  append_hex(out, p, size);
  out += '"';
}

void append_json_time(std::string& out, const DType&, int64_t count) {
  if (count == kNaT) out += "null";
  else fmt::format_to(std::back_inserter(out), "{}", count);
}

constexpr Spelling kJsonSpelling{
    "true", "false", append_float_json, append_json_complex, append_json_chars, append_json_opaque, append_json_time};

// Text, as numpy's repr writes: True, 1+2j, b'..' and '..', 0x.. for opaque bytes, ISO
// dates where the unit allows, NaT.
void append_text_complex(std::string& out, const std::string& re, const std::string& im) {
  out += re;
  if (im[0] != '-') out += '+';
  out += im;
  out += 'j';
}

void append_text_opaque(std::string& out, const uint8_t* p, uint32_t size) {
  out += "0x";
  append_hex(out, p, size);
}

void append_text_time(std::string& out, const DType& dtype, int64_t count) {
  if (count == kNaT) {
    out += "NaT";
  } else if (dtype.kind == DTypeKind::kTimedelta || !append_iso_datetime(out, count, dtype.unit)) {
    fmt::format_to(std::back_inserter(out), "{}", count);
    if (!dtype.unit.empty()) fmt::format_to(std::back_inserter(out), " {}", dtype.unit);
  }
}

constexpr Spelling kTextSpelling{
    "True",          "False", append_float_text, append_text_complex, append_python_string, append_text_opaque,
    append_text_time};

// One element at `p`, decoded here once and written in `Spelling`.
template <const Spelling& spelling>
void append_element(std::string& out, const DType& dtype, const uint8_t* p) {
  const bool big = dtype.big_endian();
  const uint32_t n = dtype.itemsize;
  switch (decodable(dtype) ? dtype.kind : DTypeKind::kVoid) {
    case DTypeKind::kBool:
      out += p[0] ? spelling.true_word : spelling.false_word;
      break;
    case DTypeKind::kInt:
      fmt::format_to(std::back_inserter(out), "{}", load_signed(p, n, big));
      break;
    case DTypeKind::kUInt:
      fmt::format_to(std::back_inserter(out), "{}", load_unsigned(p, n, big));
      break;
    case DTypeKind::kFloat:
      spelling.real(out, float_repr(p, n, big));
      break;
    case DTypeKind::kComplex:
      spelling.complex(out, float_repr(p, n / 2, big), float_repr(p + n / 2, n / 2, big));
      break;
    case DTypeKind::kBytes:
      spelling.chars(out, load_chars(dtype, p), true);
      break;
    case DTypeKind::kUnicode:
      spelling.chars(out, load_chars(dtype, p), false);
      break;
    case DTypeKind::kVoid:
      spelling.opaque(out, p, n);
      break;
    case DTypeKind::kDatetime:
    case DTypeKind::kTimedelta:
      spelling.time(out, dtype, load_signed(p, 8, big));
      break;
  }
}

// ---- nesting -----------------------------------------------------------------------------

// What goes between siblings `depth` levels down with `axes_left` axes from there on.
// Text follows numpy: a space in the last axis, otherwise a newline, one blank line per
// further axis, and an indent that lines the next bracket up under its sibling.
void append_separator(std::string& out, bool text, size_t axes_left, size_t depth) {
  if (!text) {
    out += ',';
  } else if (axes_left == 1) {
    out += ' ';
  } else {
    out.append(axes_left - 1, '\n');
    out.append(depth + 1, ' ');
  }
}

// Whether a record of `shape` is summarised (kSummaryThreshold).
bool summarised(std::span<const uint64_t> shape) {
  if (std::find(shape.begin(), shape.end(), uint64_t{0}) != shape.end()) return false;
  uint64_t elements = 1;
  for (uint64_t d : shape) {
    if (d > kSummaryThreshold) return true;
    elements *= d;  // both <= kSummaryThreshold: no overflow
    if (elements > kSummaryThreshold) return true;
  }
  return false;
}

// Writes the sub-array starting at `p` at `depth` and returns the first byte after it.
// `summary`: axes longer than 2 * kEdgeItems show only their edges around "...".
const uint8_t* append_nested(std::string& out, const DType& dtype, std::span<const uint64_t> shape, size_t depth,
                             const uint8_t* p, bool text, bool summary) {
  if (depth == shape.size()) {
    if (text) append_element<kTextSpelling>(out, dtype, p);
    else append_element<kJsonSpelling>(out, dtype, p);
    return p + dtype.itemsize;
  }
  out += '[';
  const uint64_t n = shape[depth];
  const bool elide = summary && n > 2 * kEdgeItems;
  for (uint64_t i = 0; i < n; ++i) {
    if (i > 0) append_separator(out, text, shape.size() - depth, depth);
    if (elide && i == kEdgeItems) {
      out += text ? "..." : "\"...\"";
      append_separator(out, text, shape.size() - depth, depth);
      uint64_t sub_bytes = dtype.itemsize;
      for (size_t d = depth + 1; d < shape.size(); ++d) sub_bytes *= shape[d];
      p += (n - 2 * kEdgeItems) * sub_bytes;
      i = n - kEdgeItems;
    }
    p = append_nested(out, dtype, shape, depth + 1, p, text, summary);
  }
  out += ']';
  return p;
}

}  // namespace

void append_json_record(std::string& out, const DType& dtype, std::span<const uint64_t> shape, const uint8_t* data,
                        bool summarise) {
  append_nested(out, dtype, shape, 0, data, /*text=*/false, summarise && summarised(shape));
}

void append_text_record(std::string& out, const DType& dtype, std::span<const uint64_t> shape, const uint8_t* data,
                        bool summarise) {
  append_nested(out, dtype, shape, 0, data, /*text=*/true, summarise && summarised(shape));
}

std::optional<double> element_as_double(const DType& dtype, const uint8_t* data) {
  const bool big = dtype.big_endian();
  switch (dtype.kind) {
    case DTypeKind::kBool:
      return data[0] != 0 ? 1.0 : 0.0;
    case DTypeKind::kInt:
      return double(load_signed(data, dtype.itemsize, big));
    case DTypeKind::kUInt:
      return double(load_unsigned(data, dtype.itemsize, big));
    case DTypeKind::kFloat:
      if (dtype.itemsize == 2) return half_to_double(uint16_t(load_unsigned(data, 2, big)));
      if (dtype.itemsize == 4) return double(std::bit_cast<float>(uint32_t(load_unsigned(data, 4, big))));
      if (dtype.itemsize == 8) return std::bit_cast<double>(load_unsigned(data, 8, big));
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace zrec::cli
