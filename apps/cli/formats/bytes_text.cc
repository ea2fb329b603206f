#include "cli/formats/bytes_text.h"

#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "cli/formats/printable.h"

namespace zrec::cli {

namespace {

// One code point as JSON writes it: the escapes JSON names, \u00XX for other control
// characters, UTF-8 for the rest.
void append_json_char(std::string& out, uint32_t c, std::string_view utf8) {
  switch (c) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\b':
      out += "\\b";
      return;
    case '\f':
      out += "\\f";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      if (c < 0x20 || c == 0x7f) fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
      else out += utf8;
  }
}

}  // namespace

void append_bytes_as_string(std::string& out, std::span<const uint8_t> bytes, bool json) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (!json) {
    out += printable(text);
    return;
  }
  out += '"';
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence_length(text.substr(i));
    if (n == 0) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    append_json_char(out, n == 1 ? static_cast<uint8_t>(text[i]) : 0x80, text.substr(i, n));
    i += n;
  }
  out += '"';
}

}  // namespace zrec::cli
