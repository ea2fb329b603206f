#include "cli/formats/shard_pattern.h"

#include <charconv>

namespace zrec::cli {

Result<ShardPattern> ShardPattern::parse(const std::string& pattern) {
  const auto refuse = [&](const std::string& why) {
    return invalid_argument("shard name pattern '" + pattern + "' " + why +
                            " (it needs exactly one %d, e.g. 'shard-%06d.tar', and no other '%')");
  };
  ShardPattern p;
  bool found = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (found) return refuse("has a second '%'");
    size_t j = i + 1;
    if (j < pattern.size() && pattern[j] == '0') {
      p.zero_pad_ = true;
      ++j;
    }
    size_t width = 0;
    while (j < pattern.size() && pattern[j] >= '0' && pattern[j] <= '9') {
      width = width * 10 + static_cast<size_t>(pattern[j] - '0');
      if (width > 20) return refuse("has a width over 20");
      ++j;
    }
    if (j >= pattern.size() || pattern[j] != 'd')
      return refuse("has '" + pattern.substr(i, j + 1 - i) + "', which is not %d");
    p.width_ = width;
    p.prefix_ = pattern.substr(0, i);
    p.suffix_ = pattern.substr(j + 1);
    found = true;
    i = j;
  }
  if (!found) return refuse("has no %d");
  return p;
}

std::string ShardPattern::name(uint64_t index) const {
  std::string digits = std::to_string(index);
  if (digits.size() < width_) digits.insert(0, width_ - digits.size(), zero_pad_ ? '0' : ' ');
  return prefix_ + digits + suffix_;
}

bool ShardPattern::names(std::string_view path) const {
  if (path.size() <= prefix_.size() + suffix_.size() || !path.starts_with(prefix_) || !path.ends_with(suffix_))
    return false;
  std::string_view digits = path.substr(prefix_.size(), path.size() - prefix_.size() - suffix_.size());
  while (digits.size() > 1 && (digits.front() == ' ' || digits.front() == '0')) digits.remove_prefix(1);
  uint64_t index = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  return error == std::errc() && end == digits.data() + digits.size() && name(index) == path;
}

std::string ShardPattern::directory() const {
  const size_t slash = prefix_.rfind('/');
  return slash == std::string::npos ? "." : prefix_.substr(0, slash + 1);
}

}  // namespace zrec::cli
