// Text that came from outside (paths, input lines) must not break the line-oriented
// stderr zrec writes, nor the JSON it prints: a newline in a file name would forge a
// second message, an ESC would drive the terminal, an invalid UTF-8 byte would make
// --json output unparseable.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zrec::cli {

// The length of the well-formed UTF-8 sequence at the start of `text` (1..4: no
// overlong forms, no surrogates, nothing above U+10FFFF), or 0 if it does not start
// with one (or is empty).
size_t utf8_sequence_length(std::string_view text);

// `text` for one line of stderr: control bytes (0x00-0x1f, 0x7f) and bytes that are not
// part of well-formed UTF-8 become "\xNN"; everything else, UTF-8 included, is kept.
std::string printable(std::string_view text);

}  // namespace zrec::cli
