// Reading and writing .npy headers (see npy.h).
//
// Layout (numpy/lib/format.py): magic "\x93NUMPY", major and minor version bytes, the
// header length (u16 LE for 1.0, u32 LE for 2.0 and 3.0), then the header: a Python
// dict literal, padded with spaces and ended by '\n' so the data starts at a multiple
// of 64 bytes. 1.0/2.0 headers are latin-1, 3.0 is UTF-8; only structured dtypes ever
// need non-ASCII text, and those are refused anyway.
//
// NumPy reads the dict with ast.literal_eval. We parse exactly the subset NumPy writes
// (any key order, any whitespace, single or double quotes, Python 2 "3L" longs) and
// refuse everything else, rather than half-evaluating arbitrary Python.
#include "cli/formats/npy.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "zrec/format.h"
#include "zrec/schema.h"

namespace zrec::cli {

std::string shape_to_string(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

Status check_npy_array(const NpyHeader& h, const std::string& where) {
  if (h.fortran_order && h.shape.size() > 1)
    return invalid_argument(where + ": Fortran-order arrays are not supported; save np.ascontiguousarray(a) instead");
  if (h.element_count == 0)
    return invalid_argument(where + ": array of shape " + shape_to_string(h.shape) +
                            " has no elements (records must be nonempty)");
  return Status::ok();
}

Result<NpyRecords> npy_records(const NpyHeader& h, bool ragged, bool split_axis0, const std::string& where) {
  const bool axis0_indexes = !ragged || split_axis0;
  if (axis0_indexes && h.shape.empty()) return invalid_argument(where + ": a 0-d array has no axis 0 to split");
  NpyRecords r;
  r.records = axis0_indexes ? h.shape[0] : 1;
  r.item.assign(h.shape.begin() + (axis0_indexes ? 1 : 0), h.shape.end());
  r.record_bytes = r.records == 0 ? 0 : h.data_bytes / r.records;
  const uint64_t dims_bytes = ragged ? 8 * r.item.size() : 0;
  if (dims_bytes + r.record_bytes > kMaxRecordBytes)
    return invalid_argument(where + ": a record of shape " + shape_to_string(r.item) +
                            " is 2 GiB or larger (the format's limit)");
  return r;
}
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr size_t kMaxHeaderBytes = size_t{1} << 20;
// numpy.lib.format.ARRAY_ALIGN and GROWTH_AXIS_MAX_DIGITS: data starts on a 64-byte
// boundary, and since NumPy 1.23 the dict is followed by enough spare spaces for the
// first axis to grow to 21 digits in place.
constexpr size_t kArrayAlign = 64;
constexpr size_t kGrowthAxisMaxDigits = 21;

Status header_error(const std::string& where, const std::string& rule) {
  return invalid_argument(where.empty() ? rule : where + ": " + rule);
}

// A cursor over the dict text with the few Python lexical rules the header uses.
class DictParser {
 public:
  DictParser(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  Result<NpyHeader> parse() {
    NpyHeader header;
    bool have_descr = false, have_fortran = false, have_shape = false;
    skip_ws();
    if (!consume('{')) return syntax("expected '{'");
    skip_ws();
    while (!consume('}')) {
      size_t key_at = pos_;
      ZREC_ASSIGN_OR_RETURN(std::string key, parse_string());
      skip_ws();
      if (!consume(':')) return syntax("expected ':'");
      skip_ws();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &have_descr;
        ZREC_ASSIGN_OR_RETURN(header.dtype, parse_descr());
      } else if (key == "fortran_order") {
        seen = &have_fortran;
        ZREC_ASSIGN_OR_RETURN(header.fortran_order, parse_bool());
      } else if (key == "shape") {
        seen = &have_shape;
        ZREC_ASSIGN_OR_RETURN(header.shape, parse_shape());
      } else {
        pos_ = key_at;
        return error("unexpected key '" + key + "' in .npy header");
      }
      if (*seen) return error("duplicate key '" + key + "' in .npy header");
      *seen = true;
      skip_ws();
      if (consume(',')) {
        skip_ws();
      } else if (peek() != '}') {
        return syntax("expected ',' or '}'");
      }
    }
    skip_ws();
    if (pos_ != text_.size()) return syntax("unexpected text after the dict");
    for (auto [have, key] :
         {std::pair{have_descr, "descr"}, std::pair{have_fortran, "fortran_order"}, std::pair{have_shape, "shape"}}) {
      if (!have) return error(std::string(".npy header has no '") + key + "' key");
    }

    auto count = checked_volume(header.shape, 1);
    if (!count) return error("element count of shape " + shape_text(header.shape) + " overflows 64 bits");
    auto bytes = checked_volume(header.shape, header.dtype.itemsize);
    if (!bytes) {
      return error("byte size of shape " + shape_text(header.shape) + " with dtype " + header.dtype.str() +
                   " overflows 64 bits");
    }
    header.element_count = *count;
    header.data_bytes = *bytes;
    return header;
  }

 private:
  static std::string shape_text(const std::vector<uint64_t>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + (shape.size() == 1 ? ",)" : ")");
  }

  Status error(const std::string& rule) const { return header_error(where_, rule); }
  Status syntax(const std::string& what) const {
    return error("malformed .npy header: " + what + " at column " + std::to_string(pos_ + 1));
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  // Inside brackets Python joins lines, so newlines are ordinary whitespace here.
  // Performance note: a test per character, not strchr(" \t\n\r\f\v", c), which was a
  // fifth of scanning a file of one array per record (the padding after each dict is
  // whitespace). NUL still counts, as strchr's terminator matched it.
  void skip_ws() {
    while (pos_ < text_.size() && is_space(text_[pos_])) ++pos_;
  }
  static bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || c == '\0'; }
  static bool is_ident_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           static_cast<unsigned char>(c) >= 0x80;
  }

  // 'text' or "text", optionally u-prefixed (Python 2 unicode literals). Escapes never
  // occur in what NumPy writes for a plain dtype, so a backslash is refused.
  Result<std::string> parse_string() {
    if (peek() == 'u' || peek() == 'U') {
      if (pos_ + 1 < text_.size() && (text_[pos_ + 1] == '\'' || text_[pos_ + 1] == '"')) ++pos_;
    }
    char quote = peek();
    if (quote != '\'' && quote != '"') return syntax("expected a quoted string");
    size_t start = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' || text_[pos_] == '\n') return syntax("unsupported character in string");
      ++pos_;
    }
    if (pos_ >= text_.size()) return syntax("unterminated string");
    std::string s(text_.substr(start, pos_ - start));
    ++pos_;
    return s;
  }

  Result<DType> parse_descr() {
    char c = peek();
    // A list (or a dict) of fields is how NumPy describes a structured dtype, and a
    // (base, shape) tuple a subarray one; neither maps onto one scalar per element.
    if (c == '[' || c == '{') return error("structured dtypes are not supported");
    if (c == '(') return error("subarray dtypes are not supported");
    ZREC_ASSIGN_OR_RETURN(std::string text, parse_string());
    // numpy.load passes descr to numpy.dtype(), so accept what parse_dtype accepts and
    // keep its canonical form ('<u1' -> '|u1').
    auto dtype = parse_dtype(text);
    if (!dtype.is_ok()) return error(dtype.status().message());
    return dtype;
  }

  Result<bool> parse_bool() {
    for (auto [word, value] :
         {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}}) {
      if (text_.substr(pos_).starts_with(word) &&
          (pos_ + word.size() == text_.size() || !is_ident_char(text_[pos_ + word.size()]))) {
        pos_ += word.size();
        return value;
      }
    }
    return error("'fortran_order' is not True or False");
  }

  // A tuple of Python ints: "()", "(3,)", "(3, 4)", "(3, 4,)"; "(3)" is an int, not a tuple.
  Result<std::vector<uint64_t>> parse_shape() {
    if (!consume('(')) return error("'shape' is not a tuple");
    std::vector<uint64_t> shape;
    skip_ws();
    bool trailing_comma = false;
    while (!consume(')')) {
      ZREC_ASSIGN_OR_RETURN(uint64_t dim, parse_dim());
      shape.push_back(dim);
      skip_ws();
      trailing_comma = consume(',');
      skip_ws();
      if (!trailing_comma && peek() != ')') return syntax("expected ',' or ')' in 'shape'");
    }
    if (shape.size() == 1 && !trailing_comma) return error("'shape' is not a tuple");
    return shape;
  }

  // One Python int literal: optional sign, decimal digits without leading zeros, and
  // an optional Python 2 long suffix (numpy's _filter_header strips it the same way).
  Result<uint64_t> parse_dim() {
    bool negative = false;
    if (peek() == '-' || peek() == '+') {
      negative = peek() == '-';
      ++pos_;
      skip_ws();
    }
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') ++pos_;
    std::string_view digits = text_.substr(start, pos_ - start);
    if (peek() == 'L') ++pos_;  // what numpy's _filter_header strips; repr() never wrote 'l'
    if (digits.empty() || (digits.size() > 1 && digits[0] == '0') || is_ident_char(peek()) || peek() == '.') {
      return error("'shape' entries must be integers");
    }
    uint64_t v = 0;
    bool overflow = false;
    for (char d : digits) {
      overflow = overflow || __builtin_mul_overflow(v, 10, &v) ||
                 __builtin_add_overflow(v, static_cast<uint64_t>(d - '0'), &v);
    }
    if (negative && (overflow || v != 0)) {
      return error("negative dimension -" + std::string(digits) + " in 'shape'");
    }
    if (overflow) return error("dimension " + std::string(digits) + " in 'shape' does not fit in 64 bits");
    return v;
  }

  std::string_view text_;
  const std::string& where_;
  size_t pos_ = 0;
};

void put_le(std::string& out, uint64_t v, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

Result<NpyHeader> parse_npy_header_dict(std::string_view dict_text, const std::string& where) {
  return DictParser(dict_text, where).parse();
}

Result<std::optional<NpyHeader>> read_npy_header(io::InputStream& in) {
  const uint64_t start = in.position();
  ZREC_ASSIGN_OR_RETURN(bool at_end, in.at_eof());
  if (at_end) return std::optional<NpyHeader>();
  const std::string where = "'" + in.name() + "': array at byte " + std::to_string(start);
  const NpyReadFull read_full = [&in](void* dst, size_t n) { return in.read_full(dst, n); };
  ZREC_ASSIGN_OR_RETURN(NpyHeader header, read_npy_header(read_full, where, nullptr));
  return std::optional<NpyHeader>(std::move(header));
}

Result<NpyHeader> read_npy_header(const NpyReadFull& read_full, const std::string& where, uint64_t* header_bytes) {
  // magic (6) + major (1) + minor (1)
  std::array<char, 8> lead{};
  ZREC_ASSIGN_OR_RETURN(size_t got, read_full(lead.data(), lead.size()));
  if (std::string_view(lead.data(), std::min(got, kMagic.size())) != kMagic.substr(0, std::min(got, kMagic.size()))) {
    return header_error(where, "not a .npy array (bad magic bytes)");
  }
  if (got < lead.size()) return header_error(where, "truncated .npy header");
  const auto major = static_cast<uint8_t>(lead[6]), minor = static_cast<uint8_t>(lead[7]);
  if (major < 1 || major > 3 || minor != 0) {
    return header_error(where, "unsupported .npy format version " + std::to_string(major) + "." +
                                   std::to_string(minor) + " (expected 1.0, 2.0 or 3.0)");
  }

  const size_t len_bytes = major == 1 ? 2 : 4;
  std::array<uint8_t, 4> len_le{};
  ZREC_ASSIGN_OR_RETURN(got, read_full(len_le.data(), len_bytes));
  if (got < len_bytes) return header_error(where, "truncated .npy header");
  uint64_t header_len = 0;
  for (size_t i = 0; i < len_bytes; ++i) header_len |= uint64_t{len_le[i]} << (8 * i);
  if (header_len > kMaxHeaderBytes) {
    return header_error(where, ".npy header is too long (" + std::to_string(header_len) + " bytes; the limit is " +
                                   std::to_string(kMaxHeaderBytes) + ")");
  }

  std::string text(header_len, '\0');
  ZREC_ASSIGN_OR_RETURN(got, read_full(text.data(), text.size()));
  if (got < text.size()) return header_error(where, "truncated .npy header");
  if (header_bytes != nullptr) *header_bytes = lead.size() + len_bytes + header_len;
  return parse_npy_header_dict(text, where);
}

std::string encode_npy_header(const DType& dtype, std::span<const uint64_t> shape) {
  // What numpy.lib.format._write_array_header builds: repr() of the dict with sorted
  // keys, each entry followed by ", ", then the growth spaces.
  std::string dict = "{'descr': '" + dtype.str() + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  if (!shape.empty()) dict.append(kGrowthAxisMaxDigits - std::to_string(shape[0]).size(), ' ');

  // _wrap_header: hlen counts the final '\n'; padlen is never 0 (a full 64 when the
  // header already ends on a boundary), and version 2.0 is used only when the padded
  // length does not fit the 1.0 u16 field.
  const size_t hlen = dict.size() + 1;
  uint8_t major = 1;
  size_t len_bytes = 2;
  size_t padlen = kArrayAlign - (kMagic.size() + 2 + len_bytes + hlen) % kArrayAlign;
  if (hlen + padlen > 0xffff) {
    major = 2;
    len_bytes = 4;
    padlen = kArrayAlign - (kMagic.size() + 2 + len_bytes + hlen) % kArrayAlign;
  }

  std::string out(kMagic);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  put_le(out, hlen + padlen, len_bytes);
  out += dict;
  out.append(padlen, ' ');
  out.push_back('\n');
  return out;
}

}  // namespace zrec::cli
