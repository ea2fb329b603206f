// Ragged 1-D '|u1' records are bytes of text (lines, JSON documents): `zrec cat --format
// text|jsonl` shows them as strings, not as lists of byte values.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace zrec::cli {

// Appends the bytes as a string. json: a JSON string of the UTF-8 text, each byte that
// is not part of well-formed UTF-8 as U+FFFD (JSON strings cannot carry bytes); text:
// the bytes with control bytes and bytes outside UTF-8 as \xNN (printable.h). No
// trailing newline.
void append_bytes_as_string(std::string& out, std::span<const uint8_t> bytes, bool json);

}  // namespace zrec::cli
