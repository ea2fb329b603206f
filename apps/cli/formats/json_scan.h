// The lexical layer of zrec's JSON readers (RFC 8259): whitespace, punctuation, strings
// (escapes and surrogate pairs decoded to UTF-8), number text, and skipping a value of
// any kind. Each reader (a JSON line of append-stream, a dataset card) builds its own
// grammar of what it accepts on top, and its errors name the byte:
//
//   JsonScanner in(text, "not a JSON object");
//   if (!in.eat('{')) return in.bad("expected '{'");   // "not a JSON object at byte 0: expected '{'"
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "zrec/status.h"

namespace zrec::cli {

class JsonScanner {
 public:
  // `what` begins every error ("not a JSON object").
  JsonScanner(std::string_view text, std::string what) : s_(text), what_(std::move(what)) {}

  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  size_t at() const { return at_; }
  // The text between byte `from` and the current position (a value skipped, kept raw).
  std::string_view text_from(size_t from) const { return s_.substr(from, at_ - from); }
  bool at_end() const { return at_ >= s_.size(); }
  // Takes `c` when it is next.
  bool eat(char c) {
    if (at_ >= s_.size() || s_[at_] != c) return false;
    ++at_;
    return true;
  }
  void space();
  // A string, the next character being its opening quote: its text as UTF-8 into `out`
  // (appended).
  Status string(std::string& out);
  // A number's text, the next character being its first: appended to `out`.
  void number(std::string& out);
  // Skips one value of any kind (objects and arrays up to `max_depth` deep).
  Status skip_value(int max_depth = 32);
  // kInvalidArgument "<what> at byte N: <rule>".
  Status bad(const std::string& rule) const;

 private:
  Result<uint32_t> hex4();
  bool literal(std::string_view word);

  std::string_view s_;
  std::string what_;
  size_t at_ = 0;
};

}  // namespace zrec::cli
