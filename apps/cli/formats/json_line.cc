// parse_json_object: see json_line.h. A recursive-descent parser of the JSON grammar
// (RFC 8259) for the values it accepts.
#include "cli/formats/json_line.h"

#include <algorithm>

#include "cli/formats/json_string.h"

namespace zrec::cli {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Result<std::vector<JsonField>> object() {
    std::vector<JsonField> out;
    space();
    if (!eat('{')) return bad("expected '{' (each line is one JSON object)");
    space();
    if (eat('}')) return end(std::move(out));
    for (;;) {
      JsonField f;
      space();
      if (peek() != '"') return bad("expected a key in double quotes");
      ZREC_RETURN_IF_ERROR(string(f.key));
      for (const auto& o : out)
        if (o.key == f.key) return bad("the key \"" + f.key + "\" is repeated");
      space();
      if (!eat(':')) return bad("expected ':' after a key");
      space();
      ZREC_RETURN_IF_ERROR(value(f));
      out.push_back(std::move(f));
      space();
      if (eat('}')) return end(std::move(out));
      if (!eat(',')) return bad("expected ',' or '}'");
    }
  }

 private:
  Result<std::vector<JsonField>> end(std::vector<JsonField> out) {
    space();
    if (at_ != s_.size()) return bad("text after the object");
    return out;
  }
  Status value(JsonField& f) {
    const char c = peek();
    if (c == '"') {
      f.kind = JsonField::Kind::kString;
      return string(f.text);
    }
    if (c == '[') {
      f.kind = JsonField::Kind::kArray;
      return array(f, 0);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      f.kind = JsonField::Kind::kNumber;
      return number(f);
    }
    return bad("a value must be a string, a number or an array of numbers");
  }
  Status array(JsonField& f, int depth) {
    if (depth > 32) return bad("arrays nested more than 32 deep");
    ++at_;  // '['
    space();
    if (eat(']')) return Status::ok();
    for (;;) {
      space();
      if (peek() == '[') ZREC_RETURN_IF_ERROR(array(f, depth + 1));
      else if (peek() == '-' || (peek() >= '0' && peek() <= '9')) ZREC_RETURN_IF_ERROR(number(f));
      else return bad("an array holds numbers (or arrays of numbers) only");
      space();
      if (eat(']')) return Status::ok();
      if (!eat(',')) return bad("expected ',' or ']' in an array");
    }
  }
  Status number(JsonField& f) {
    const size_t from = at_;
    while (at_ < s_.size() && std::string_view("+-0123456789.eE").find(s_[at_]) != std::string_view::npos) ++at_;
    if (!f.text.empty()) f.text += ' ';
    f.text.append(s_.substr(from, at_ - from));
    ++f.count;
    return Status::ok();
  }
  Status string(std::string& out) {
    ++at_;  // '"'
    for (;;) {
      if (at_ >= s_.size()) return bad("a string is not closed");
      const unsigned char c = static_cast<unsigned char>(s_[at_++]);
      if (c == '"') return Status::ok();
      if (c < 0x20) return bad("a control character in a string (escape it)");
      if (c != '\\') {
        out += static_cast<char>(c);  // UTF-8 is kept as it is
        continue;
      }
      if (at_ >= s_.size()) return bad("a string is not closed");
      const char e = s_[at_++];
      uint32_t cp = 0;
      switch (e) {
        case '"':
          cp = '"';
          break;
        case '\\':
          cp = '\\';
          break;
        case '/':
          cp = '/';
          break;
        case 'b':
          cp = '\b';
          break;
        case 'f':
          cp = '\f';
          break;
        case 'n':
          cp = '\n';
          break;
        case 'r':
          cp = '\r';
          break;
        case 't':
          cp = '\t';
          break;
        case 'u': {
          ZREC_ASSIGN_OR_RETURN(cp, hex4());
          if (cp >= 0xD800 && cp < 0xDC00 && s_.substr(at_, 2) == "\\u") {
            at_ += 2;
            ZREC_ASSIGN_OR_RETURN(const uint32_t low, hex4());
            if (low < 0xDC00 || low > 0xDFFF) return bad("a high surrogate without its low one");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          } else if (cp >= 0xD800 && cp < 0xE000) {
            return bad("a lone surrogate");
          }
          break;
        }
        default:
          return bad("an unknown escape in a string");
      }
      append_utf8(out, cp);
    }
  }
  Result<uint32_t> hex4() {
    if (at_ + 4 > s_.size()) return bad("\\u needs 4 hex digits");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[at_++];
      const int d = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
      if (d < 0) return bad("\\u needs 4 hex digits");
      v = v * 16 + static_cast<uint32_t>(d);
    }
    return v;
  }
  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || at_ >= s_.size()) return false;
    ++at_;
    return true;
  }
  void space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\r' || s_[at_] == '\n')) ++at_;
  }
  Status bad(const std::string& rule) const {
    return invalid_argument("not a JSON object at byte " + std::to_string(at_) + ": " + rule);
  }

  std::string_view s_;
  size_t at_ = 0;
};

}  // namespace

Result<std::vector<JsonField>> parse_json_object(std::string_view line) { return Parser(line).object(); }

}  // namespace zrec::cli
