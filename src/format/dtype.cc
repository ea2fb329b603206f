// Parsing and printing NumPy dtype strings (docs/format.md §4 and §10 "dtype grammar").
//
// parse_dtype() is the lenient front door for what a user types ("float32", "i4",
// "=f8", "datetime64[ns]"); everything is funnelled into one letter grammar
//   [<>=|]? kind digits? ('[' multiplier? unit ']')?
// and then normalized the way numpy.dtype(x).str does. parse_canonical_dtype() is the
// strict door for bytes read from a store or a .npy header: the text must already be
// what str() prints, so a store can only ever hold one spelling of a dtype.
#include "zrec/dtype.h"

#include <array>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace zrec {
namespace {

// numpy stores itemsize and datetime multipliers in a C int; larger values wrap
// around to negative numbers there (np.dtype('S2147483648').str == '|S-2147483648').
constexpr uint64_t kMaxInt32 = 0x7fffffff;

// f12/f16 and c24/c32 are x87 or IEEE quad depending on the platform, so their bytes
// mean different numbers to different readers.
constexpr std::string_view kLongDoubleRule = "platform-dependent long doubles (f12, f16, c24, c32) are not supported";

constexpr std::array<std::string_view, 13> kDatetimeUnits = {"Y",  "M",  "W",  "D",  "h",  "m", "s",
                                                             "ms", "us", "ns", "ps", "fs", "as"};

Status bad_dtype(std::string_view text, std::string_view rule) {
  return invalid_argument("dtype '" + std::string(text) + "': " + std::string(rule));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Parses a run of decimal digits (leading zeros allowed, as numpy does for "i04").
// Returns nullopt when empty, not all digits, or above kMaxInt32.
std::optional<uint64_t> parse_decimal(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v > kMaxInt32) return std::nullopt;
  return v;
}

// Maps a NumPy type name to the letter grammar ("float32" -> "f4"). Returns nullopt
// for anything that is not a name, so the caller falls through to the letter grammar.
// Sized names (bytes5, str5, unicode5, void4) are zrec's spelling of S5/U5/V4; NumPy
// itself dropped them in 1.20, but they read well on a command line.
constexpr std::array<std::pair<std::string_view, std::string_view>, 19> kFixed = {{
    {"bool", "b1"},      {"int8", "i1"},        {"int16", "i2"},      {"int32", "i4"},       {"int64", "i8"},
    {"uint8", "u1"},     {"uint16", "u2"},      {"uint32", "u4"},     {"uint64", "u8"},      {"float16", "f2"},
    {"float32", "f4"},   {"float64", "f8"},     {"half", "f2"},       {"single", "f4"},      {"double", "f8"},
    {"complex64", "c8"}, {"complex128", "c16"}, {"datetime64", "M8"}, {"timedelta64", "m8"},
}};

std::optional<std::string> name_to_letters(std::string_view name) {
  for (const auto& [n, letters] : kFixed) {
    if (name == n) return std::string(letters);
  }
  // datetime64[unit] / timedelta64[unit]
  for (const auto& [prefix, letters] :
       std::array<std::pair<std::string_view, std::string_view>, 2>{{{"datetime64[", "M8"}, {"timedelta64[", "m8"}}}) {
    if (name.starts_with(prefix)) {
      return std::string(letters) + std::string(name.substr(prefix.size() - 1));
    }
  }
  // bytesN / strN / unicodeN / voidN (bare "bytes" etc. mean size 0, as in NumPy).
  for (const auto& [prefix, letter] : std::array<std::pair<std::string_view, char>, 4>{
           {{"bytes", 'S'}, {"unicode", 'U'}, {"str", 'U'}, {"void", 'V'}}}) {
    if (!name.starts_with(prefix)) continue;
    std::string_view rest = name.substr(prefix.size());
    bool all_digits = true;
    for (char c : rest) all_digits = all_digits && is_digit(c);
    if (all_digits) return std::string(1, letter) + std::string(rest);
  }
  return std::nullopt;
}

bool is_long_double_name(std::string_view name) {
  static constexpr std::array<std::string_view, 8> kNames = {"longdouble", "clongdouble", "float96", "float128",
                                                             "complex192", "complex256",  "g",       "G"};
  for (auto n : kNames) {
    if (name == n) return true;
  }
  return false;
}

bool is_object_name(std::string_view name) { return name == "object" || name == "object_"; }

// Parses the body of a datetime bracket, "25s" or "ns" or "generic", into the unit
// string DType keeps ("25s", "ns", ""). A multiplier of 1 is dropped as NumPy does
// ("m8[1s]" -> "<m8[s]").
Result<std::string> parse_datetime_unit(std::string_view text, std::string_view body) {
  if (body == "generic") return std::string();
  size_t i = 0;
  while (i < body.size() && is_digit(body[i])) ++i;
  std::string_view digits = body.substr(0, i);
  std::string_view unit = body.substr(i);
  bool known = false;
  for (auto u : kDatetimeUnits) known = known || unit == u;
  if (!known) {
    return bad_dtype(text, "unknown datetime unit '" + std::string(unit) +
                               "' (expected Y, M, W, D, h, m, s, ms, us, ns, ps, fs or as)");
  }
  if (digits.empty()) return std::string(unit);
  auto mult = parse_decimal(digits);
  if (!mult) return bad_dtype(text, "datetime unit multiplier is larger than 2147483647");
  // NumPy prints "[0s]" but a zero-length tick has no meaning; refuse it.
  if (*mult == 0) return bad_dtype(text, "datetime unit multiplier must be at least 1");
  if (*mult == 1) return std::string(unit);
  return std::to_string(*mult) + std::string(unit);
}

// The letter grammar: [<>=|]? kind digits? ('[' unit ']')?. `text` is what the user
// wrote (for messages); `s` may be its translation from a NumPy name.
// The itemsize `n` of a number kind (b, i, u, f, c) is one NumPy has; long doubles are
// refused with their own rule.
Status check_number_itemsize(std::string_view text, DTypeKind kind, uint64_t n) {
  bool ok = false;
  switch (kind) {
    case DTypeKind::kBool:
      ok = n == 1;
      break;
    case DTypeKind::kInt:
    case DTypeKind::kUInt:
      ok = n == 1 || n == 2 || n == 4 || n == 8;
      break;
    case DTypeKind::kFloat:
      if (n == 12 || n == 16) {
        return bad_dtype(text, kLongDoubleRule);
      }
      ok = n == 2 || n == 4 || n == 8;
      break;
    case DTypeKind::kComplex:
      if (n == 24 || n == 32) {
        return bad_dtype(text, kLongDoubleRule);
      }
      ok = n == 8 || n == 16;
      break;
    default:
      break;
  }
  if (!ok) return bad_dtype(text, "not a supported dtype");
  return Status::ok();
}

Result<DType> parse_letters(std::string_view text, std::string_view s) {
  char order = '=';
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '=' || s[0] == '|')) {
    order = s[0];
    s.remove_prefix(1);
  }
  if (s.empty()) return bad_dtype(text, "missing type letter");
  const char letter = s[0];
  s.remove_prefix(1);

  std::string_view bracket;
  if (size_t open = s.find('['); open != std::string_view::npos) {
    bracket = s.substr(open);
    s = s.substr(0, open);
  }
  const std::string_view digits = s;

  if (letter == 'O') return bad_dtype(text, "object dtype is not supported");

  // A DTypeKind's value is its letter (zrec/dtype.h); these are all of them.
  constexpr std::string_view kKindLetters = "biufcSUVMm";
  if (kKindLetters.find(letter) == std::string_view::npos) return bad_dtype(text, "not a supported dtype");
  DType d;
  d.kind = static_cast<DTypeKind>(letter);
  const bool is_datetime = d.kind == DTypeKind::kDatetime || d.kind == DTypeKind::kTimedelta;
  if (!bracket.empty() && !is_datetime) return bad_dtype(text, "not a supported dtype");

  for (char c : digits) {
    if (!is_digit(c)) return bad_dtype(text, "not a supported dtype");
  }
  std::optional<uint64_t> size;
  if (!digits.empty()) {
    size = parse_decimal(digits);
    if (!size) return bad_dtype(text, "itemsize is larger than 2147483647 bytes");
  }

  switch (d.kind) {
    case DTypeKind::kBytes:
    case DTypeKind::kUnicode:
    case DTypeKind::kVoid: {
      uint64_t n = size.value_or(0);
      if (n == 0) return bad_dtype(text, "zero itemsize is not allowed");
      uint64_t bytes = d.kind == DTypeKind::kUnicode ? 4 * n : n;
      if (bytes > kMaxInt32) return bad_dtype(text, "itemsize is larger than 2147483647 bytes");
      d.itemsize = static_cast<uint32_t>(bytes);
      break;
    }
    case DTypeKind::kDatetime:
    case DTypeKind::kTimedelta:
      // "M" alone is NumPy shorthand for "M8"; no other size exists.
      if (size && (*size != 8 || digits.size() != 1)) {
        return bad_dtype(text, "datetime64/timedelta64 must be 8 bytes");
      }
      if (!size && !bracket.empty()) return bad_dtype(text, "not a supported dtype");  // as NumPy
      d.itemsize = 8;
      if (!bracket.empty()) {
        if (bracket.size() < 2 || bracket.back() != ']' || bracket.find(']') != bracket.size() - 1) {
          return bad_dtype(text, "malformed datetime unit");
        }
        ZREC_ASSIGN_OR_RETURN(d.unit, parse_datetime_unit(text, bracket.substr(1, bracket.size() - 2)));
      }
      break;
    default: {
      if (!size) return bad_dtype(text, "not a supported dtype");
      const uint64_t n = *size;
      ZREC_RETURN_IF_ERROR(check_number_itemsize(text, d.kind, n));
      d.itemsize = static_cast<uint32_t>(n);
      break;
    }
  }

  // Byte order as numpy.dtype.str prints it: '|' where order cannot matter, and the
  // host's order (little-endian) for native '=' and for '|' on multi-byte types.
  const bool order_free = d.itemsize == 1 && d.kind != DTypeKind::kUnicode;
  if (order_free || d.kind == DTypeKind::kBytes || d.kind == DTypeKind::kVoid) {
    d.byte_order = '|';
  } else {
    d.byte_order = order == '>' ? '>' : '<';
  }
  return d;
}

}  // namespace

std::string DType::str() const {
  std::string s(1, byte_order);
  s += static_cast<char>(kind);
  s += std::to_string(kind == DTypeKind::kUnicode ? itemsize / 4 : itemsize);
  if (!unit.empty()) s += "[" + unit + "]";
  return s;
}

uint32_t DType::swap_unit() const {
  switch (kind) {
    case DTypeKind::kComplex:
      return itemsize / 2;
    case DTypeKind::kUnicode:
      return 4;
    case DTypeKind::kBool:
    case DTypeKind::kBytes:
    case DTypeKind::kVoid:
      return 1;
    default:
      return itemsize;
  }
}

Result<DType> parse_dtype(std::string_view text) {
  if (text.empty()) return invalid_argument("dtype is empty");
  // Subarray and structured dtypes have recognisable shapes: a leading repeat count
  // ("(2,)i4", "3f8") and field lists ("i4,f8", "[('a', '<i4')]", "{...}").
  if (text[0] == '(' || is_digit(text[0])) return bad_dtype(text, "subarray dtypes are not supported");
  if (text.find(',') != std::string_view::npos || text[0] == '[' || text[0] == '{') {
    return bad_dtype(text, "structured dtypes are not supported");
  }
  if (is_object_name(text)) return bad_dtype(text, "object dtype is not supported");
  if (is_long_double_name(text)) {
    return bad_dtype(text, kLongDoubleRule);
  }
  if (auto letters = name_to_letters(text)) return parse_letters(text, *letters);
  return parse_letters(text, text);
}

Result<DType> parse_canonical_dtype(std::string_view text) {
  auto parsed = parse_dtype(text);
  if (!parsed.is_ok()) return malformed(parsed.status().message());
  std::string canonical = parsed->str();
  if (canonical != text) {
    return malformed("dtype '" + std::string(text) + "' is not canonical (expected '" + canonical + "')");
  }
  return parsed;
}

std::vector<std::string> numpy_dtype_names() {
  std::vector<std::string> names;
  for (const auto& [n, letters] : kFixed) names.emplace_back(n);
  return names;
}

}  // namespace zrec
