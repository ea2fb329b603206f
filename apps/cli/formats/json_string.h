// JSON string literals: the one escaper of every JSON zrec writes (--json reports,
// `cat --format jsonl`, zrec view's API), so a name or a value is escaped the same
// way wherever it appears.
//
//   std::string out;
//   append_json_string(out, "a\"b\x7f");  // out == R"("a\"b\u007f")"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zrec::cli {

// Appends code point `c` (at most U+10FFFF) encoded as UTF-8.
void append_utf8(std::string& out, uint32_t c);

// Appends code point `c` as it appears inside a JSON string: '"' and '\' escaped;
// \b \f \n \r \t by their short forms; the other C0 controls and DEL as \u00XX;
// everything else as UTF-8.
void append_json_char(std::string& out, uint32_t c);

// Appends `text` as a JSON string literal, quotes included: each character as
// append_json_char writes it, well-formed UTF-8 passed through, and each byte that is
// not part of well-formed UTF-8 (a file name in another encoding) written as \ufffd,
// so the output is always valid UTF-8 JSON.
void append_json_string(std::string& out, std::string_view text);

}  // namespace zrec::cli
