// pretty_json: a strict RFC 8259 parser that writes as it parses (see json_text.h).
#include "cli/view/json_text.h"

#include <cctype>

#include "cli/formats/printable.h"

namespace zrec::cli::view {

namespace {

class Pretty {
 public:
  explicit Pretty(std::string_view text) : s_(text) {}

  bool document(std::string& out) {
    out_ = &out;
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '{' && s_[pos_] != '[')) return false;
    if (!value(0)) return false;
    skip_space();
    return pos_ == s_.size();
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  void newline(int depth) {
    *out_ += '\n';
    out_->append(size_t(2 * depth), ' ');
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    *out_ += word;
    pos_ += word.size();
    return true;
  }
  bool digits() {
    const size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }
  bool number() {
    const size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    if (pos_ < s_.size() && s_[pos_] == '0') ++pos_;
    else if (!digits()) return false;
    if (pos_ < s_.size() && s_[pos_] == '.' && (++pos_, !digits())) return false;
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return false;
    }
    out_->append(s_.substr(start, pos_ - start));
    return true;
  }
  bool string() {
    const size_t start = pos_++;  // the opening quote
    while (pos_ < s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        out_->append(s_.substr(start, pos_ - start));
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++pos_ >= s_.size()) return false;
        const char e = s_[pos_];
        if (e == 'u') {
          for (int k = 1; k <= 4; ++k)
            if (pos_ + k >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_ + k]))) return false;
          pos_ += 5;
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) return false;
        ++pos_;
        continue;
      }
      const size_t n = c < 0x80 ? 1 : utf8_sequence_length(s_.substr(pos_));
      if (n == 0) return false;
      pos_ += n;
    }
    return false;
  }
  bool container(int depth, char open, char close, bool object) {
    if (depth >= kMaxJsonDepth) return false;
    *out_ += open;
    ++pos_;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == close) {
      ++pos_;
      *out_ += close;
      return true;
    }
    for (;;) {
      newline(depth + 1);
      skip_space();
      if (object) {
        if (pos_ >= s_.size() || s_[pos_] != '"' || !string()) return false;
        skip_space();
        if (pos_ >= s_.size() || s_[pos_] != ':') return false;
        ++pos_;
        *out_ += ": ";
        skip_space();
      }
      if (!value(depth + 1)) return false;
      skip_space();
      if (pos_ >= s_.size()) return false;
      if (s_[pos_] == ',') {
        ++pos_;
        *out_ += ',';
        continue;
      }
      if (s_[pos_] != close) return false;
      ++pos_;
      newline(depth);
      *out_ += close;
      return true;
    }
  }
  bool value(int depth) {
    if (pos_ >= s_.size()) return false;
    switch (s_[pos_]) {
      case '{':
        return container(depth, '{', '}', true);
      case '[':
        return container(depth, '[', ']', false);
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::string* out_ = nullptr;
};

}  // namespace

std::optional<std::string> pretty_json(std::string_view text, size_t max_bytes) {
  std::string out;
  if (!Pretty(text).document(out)) return std::nullopt;
  if (out.size() > max_bytes) {
    out.resize(max_bytes);
    out += "...";
  }
  return out;
}

}  // namespace zrec::cli::view
