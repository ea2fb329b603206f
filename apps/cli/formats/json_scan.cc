// JsonScanner: see json_scan.h.
#include "cli/formats/json_scan.h"

#include "cli/formats/json_string.h"

namespace zrec::cli {

void JsonScanner::space() {
  while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\r' || s_[at_] == '\n')) ++at_;
}

Status JsonScanner::string(std::string& out) {
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
      case '\\':
      case '/':
        cp = static_cast<uint32_t>(e);
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

void JsonScanner::number(std::string& out) {
  const size_t from = at_;
  while (at_ < s_.size() && std::string_view("+-0123456789.eE").find(s_[at_]) != std::string_view::npos) ++at_;
  out.append(s_.substr(from, at_ - from));
}

bool JsonScanner::literal(std::string_view word) {
  if (s_.substr(at_, word.size()) != word) return false;
  at_ += word.size();
  return true;
}

Status JsonScanner::skip_value(int max_depth) {
  space();
  const char c = peek();
  if (c == '"') {
    std::string ignored;
    return string(ignored);
  }
  if (c == '-' || (c >= '0' && c <= '9')) {
    std::string ignored;
    number(ignored);
    return Status::ok();
  }
  if (literal("true") || literal("false") || literal("null")) return Status::ok();
  if (c != '[' && c != '{') return bad("expected a value");
  if (max_depth == 0) return bad("values nested too deep");
  const char close = c == '[' ? ']' : '}';
  ++at_;
  space();
  if (eat(close)) return Status::ok();
  for (;;) {
    space();
    if (close == '}') {
      if (peek() != '"') return bad("expected a key in double quotes");
      std::string ignored;
      ZREC_RETURN_IF_ERROR(string(ignored));
      space();
      if (!eat(':')) return bad("expected ':' after a key");
    }
    ZREC_RETURN_IF_ERROR(skip_value(max_depth - 1));
    space();
    if (eat(close)) return Status::ok();
    if (!eat(',')) return bad(std::string("expected ',' or '") + close + "'");
  }
}

Result<uint32_t> JsonScanner::hex4() {
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

Status JsonScanner::bad(const std::string& rule) const {
  return invalid_argument(what_ + " at byte " + std::to_string(at_) + ": " + rule);
}

}  // namespace zrec::cli
