// Encoding and strict decoding of join plan files (store/join_plan_file.h).
#include "store/join_plan_file.h"

#include <charconv>

#include "format/layout.h"

namespace zrec::store {
namespace {

const char kHex[] = "0123456789abcdef";

std::string hex(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

void put_path(std::string& out, const char* key, const std::string& path) {
  out += key;
  out += ' ' + std::to_string(path.size()) + ' ' + path + '\n';
}

// Reads the plan's text field by field; the first failure is kept with its line.
class Reader {
 public:
  Reader(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  bool ok() const { return error_.empty(); }
  Status status() const {
    return malformed("'" + name_ + "' is not a zrec join plan: line " + std::to_string(line_) + ": " + error_);
  }
  // "key " at the start of a line.
  void key(std::string_view k) {
    if (!ok()) return;
    if (text_.substr(pos_, k.size() + 1) != std::string(k) + " ") return fail("expected '" + std::string(k) + "'");
    pos_ += k.size() + 1;
  }
  // A run of characters up to a space or the end of the line.
  std::string_view word() {
    if (!ok()) return {};
    const size_t end = text_.find_first_of(" \n", pos_);
    if (end == std::string_view::npos || end == pos_) {
      fail("a field is missing");
      return {};
    }
    std::string_view w = text_.substr(pos_, end - pos_);
    pos_ = end;
    return w;
  }
  uint64_t number(uint64_t max = UINT64_MAX) {
    std::string_view w = word();
    uint64_t v = 0;
    if (!ok()) return 0;
    auto [p, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
    if (ec != std::errc() || p != w.data() + w.size() || (w.size() > 1 && w[0] == '0') || v > max)
      fail("'" + std::string(w) + "' is not a number up to " + std::to_string(max));
    return v;
  }
  std::string hex_bytes(size_t max_bytes) {
    std::string_view w = word();
    std::string out;
    if (!ok()) return out;
    if (w.size() % 2 != 0 || w.size() / 2 > max_bytes) {
      fail("a hexadecimal field of the wrong size");
      return out;
    }
    for (size_t i = 0; i < w.size(); i += 2) {
      const auto hi = std::string_view(kHex).find(w[i]), lo = std::string_view(kHex).find(w[i + 1]);
      if (hi == std::string_view::npos || lo == std::string_view::npos) {
        fail("'" + std::string(w) + "' is not lowercase hexadecimal");
        return out;
      }
      out += static_cast<char>(hi * 16 + lo);
    }
    return out;
  }
  // "<n> <n bytes>": a path, any bytes.
  std::string sized() {
    const uint64_t n = number(4096);
    space();
    if (!ok()) return {};
    if (text_.size() - pos_ < n) {
      fail("the file ends inside a name");
      return {};
    }
    std::string s(text_.substr(pos_, n));
    for (char c : s) line_ += c == '\n';
    pos_ += n;
    return s;
  }
  // The line `s` and nothing after it.
  void last_line(std::string_view s) {
    if (!ok()) return;
    if (text_.substr(pos_) != std::string(s) + "\n") fail("expected '" + std::string(s) + "' as the last line");
  }
  void space() {
    if (ok() && (pos_ >= text_.size() || text_[pos_++] != ' ')) fail("expected a space");
  }
  void end_line() {
    if (!ok()) return;
    if (pos_ >= text_.size() || text_[pos_] != '\n') return fail("unexpected text at the end of the line");
    ++pos_;
    ++line_;
  }
  void fail(const std::string& why) {
    if (ok()) error_ = why;
  }

 private:
  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
  uint64_t line_ = 2;  // the text starts after the magic line
  std::string error_;
};

}  // namespace

std::string encode_join_plan(const JoinPlanFile& plan) {
  std::string out(kJoinPlanMagic);
  out += "id " + plan.id + "\n";
  put_path(out, "dest", plan.dest);
  put_path(out, "temp", plan.temp);
  out += "shards " + std::to_string(plan.shards) + "\n";
  out += std::string("codec ") + to_string(plan.codec) + "\n";
  out += std::string("checksum ") + (plan.checksum ? "1" : "0") + "\n";
  out += "schema " + hex(plan.schema) + "\n";
  out += "dictionary " + (plan.dictionary.empty() ? std::string("none") : plan.dictionary) + "\n";
  out += "parts " + std::to_string(plan.parts.size()) + "\n";
  for (size_t k = 0; k < plan.parts.size(); ++k) {
    const auto& p = plan.parts[k];
    out += "part " + std::to_string(k) + " " + std::to_string(p.shape.length) + " ";
    put_path(out, "path", p.path);
    out += "tails";
    for (uint64_t t : p.shape.tails) out += " " + std::to_string(t);
    out += "\n";
  }
  out += "end\n";
  return out;
}

Result<JoinPlanFile> decode_join_plan(std::string_view text, const std::string& name) {
  if (!text.starts_with(kJoinPlanMagic))
    return malformed("'" + name + "' is not a zrec join plan (it does not start with 'zrec-join-plan 1')");
  Reader r(text.substr(kJoinPlanMagic.size()), name);
  JoinPlanFile plan;
  r.key("id");
  plan.id = std::string(r.word());
  if (r.ok() && (plan.id.size() != 32 || plan.id.find_first_not_of(kHex) != std::string::npos))
    r.fail("the id is not 32 lowercase hexadecimal digits");
  r.end_line();
  r.key("dest");
  plan.dest = r.sized();
  r.end_line();
  r.key("temp");
  plan.temp = r.sized();
  r.end_line();
  r.key("shards");
  plan.shards = static_cast<uint32_t>(r.number(format::kMaxShards));
  if (r.ok() && plan.shards == 0) r.fail("shards must be 1..255");
  r.end_line();
  r.key("codec");
  const std::string_view codec = r.word();
  if (r.ok()) {
    auto c = parse_codec(codec);
    if (!c || codec == "zstdict") r.fail("unknown codec '" + std::string(codec) + "'");
    else plan.codec = *c;
  }
  r.end_line();
  r.key("checksum");
  plan.checksum = r.number(1) == 1;
  r.end_line();
  r.key("schema");
  plan.schema = r.hex_bytes(format::kMaxSchemaLength);
  r.end_line();
  r.key("dictionary");
  const std::string_view dict = r.word();
  if (r.ok() && dict != "none") {
    if (dict.size() != 64 || dict.find_first_not_of(kHex) != std::string_view::npos)
      r.fail("the dictionary's SHA-256 is not 64 lowercase hexadecimal digits");
    plan.dictionary = std::string(dict);
  }
  r.end_line();
  r.key("parts");
  const uint64_t parts = r.number(UINT32_MAX);
  r.end_line();
  for (uint64_t k = 0; k < parts && r.ok(); ++k) {
    JoinPlanFile::Part part;
    r.key("part");
    if (r.number() != k) r.fail("expected part " + std::to_string(k));
    r.space();
    part.shape.length = r.number();
    r.space();
    r.key("path");
    part.path = r.sized();
    r.end_line();
    r.key("tails");
    for (uint32_t s = 0; s < plan.shards && r.ok(); ++s) {
      if (s > 0) r.space();
      part.shape.tails.push_back(r.number());
    }
    r.end_line();
    plan.parts.push_back(std::move(part));
  }
  r.last_line("end");
  return r.ok() ? Result<JoinPlanFile>(std::move(plan)) : Result<JoinPlanFile>(r.status());
}

}  // namespace zrec::store
