// JSON string literals (json_string.h).
#include "cli/formats/json_string.h"

#include <iterator>

#include <fmt/format.h>

#include "cli/formats/printable.h"

namespace zrec::cli {

void append_utf8(std::string& out, uint32_t c) {
  if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xc0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xe0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (c & 0x3f));
  }
}

void append_json_char(std::string& out, uint32_t c) {
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
      break;
  }
  if (c < 0x20 || c == 0x7f) fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
  else append_utf8(out, c);
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  while (!text.empty()) {
    const size_t n = utf8_sequence_length(text);
    if (n > 1) {
      out.append(text.substr(0, n));
    } else if (n == 0) {
      out += "\\ufffd";  // not UTF-8: JSON cannot carry the byte; U+FFFD stands for it
    } else {
      append_json_char(out, static_cast<unsigned char>(text[0]));
    }
    text.remove_prefix(n == 0 ? 1 : n);
  }
  out += '"';
}

}  // namespace zrec::cli
