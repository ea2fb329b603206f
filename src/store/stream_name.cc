// The stream name rule (see zrec/dataset.h).
#include <cstdint>
#include <cstdio>

#include "zrec/dataset.h"

namespace zrec {

namespace {

constexpr size_t kMaxStreamName = 128;

bool word_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace

std::string stream_name_problem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.size() > kMaxStreamName) return "it is " + std::to_string(name.size()) + " bytes long";
  for (const char c : name) {
    if (word_byte(c) || c == '.') continue;
    if (c == ' ') return "it holds a space";
    if (c > 0x20 && c < 0x7f) return std::string("it holds the character '") + c + "'";
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(static_cast<uint8_t>(c)));
    return std::string("it holds the byte ") + hex;
  }
  if (name.front() == '.') return "it is hidden (starts with '.')";
  if (name.back() == '.') return "it ends with '.'";
  if (name.find("..") != std::string_view::npos) return "it holds an empty word ('..')";
  if (name.front() == '-') return "it starts with '-'";
  if (name.ends_with(".zr")) return "it is a store file name (ends in '.zr')";
  for (size_t at = 0; at < name.size();) {
    const std::string_view word = name.substr(at, name.find('.', at) - at);
    if (word.starts_with("zrec-") || word.starts_with("tmp-"))
      return "it has the word '" + std::string(word) + "' (the pattern of zrec's own and temporary files)";
    at += word.size() + 1;
  }
  return {};
}

Status check_root_streams(const std::string& root, const std::vector<std::string>& names) {
  for (const auto& name : names)
    if (const std::string why = stream_name_problem(name); !why.empty())
      return invalid_argument("'" + root + "' holds the store '" + name + "', which cannot be a stream: " + why + " (" +
                              kStreamNameRule + "); move it out of the root");
  return Status::ok();
}

}  // namespace zrec
