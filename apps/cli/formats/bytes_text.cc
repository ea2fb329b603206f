// Byte records as strings (bytes_text.h).
#include "cli/formats/bytes_text.h"

#include <string_view>

#include "cli/formats/json_string.h"
#include "cli/formats/printable.h"

namespace zrec::cli {

void append_bytes_as_string(std::string& out, std::span<const uint8_t> bytes, bool json) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (json) append_json_string(out, text);  // the one JSON escaper
  else out += printable(text);
}

}  // namespace zrec::cli
