// parse_header_line and trim_space (see http_header.h).
#include "io/http_header.h"

#include <cctype>
#include <charconv>

namespace zrec::io {

bool HeaderLine::is(std::string_view lower_name) const {
  if (name.size() != lower_name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(name[i])) != lower_name[i]) return false;
  return true;
}

HeaderLine parse_header_line(std::string_view line) {
  HeaderLine h;
  if (line.starts_with("HTTP/")) {
    h.starts_response = true;
    const size_t sp = line.find(' ');
    if (sp != std::string_view::npos) {
      const std::string_view rest = line.substr(sp + 1);
      long code = 0;
      if (std::from_chars(rest.data(), rest.data() + rest.size(), code).ec == std::errc()) h.status = code;
      h.status_text = trim_space(rest);
    }
    return h;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return h;
  h.name = line.substr(0, colon);
  h.value = trim_space(line.substr(colon + 1));
  return h;
}

std::string trim_space(std::string_view s) {
  while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return std::string(s);
}

}  // namespace zrec::io
