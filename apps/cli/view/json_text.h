// Records that hold JSON text (a |u1 record written by a tokenizer or an annotation tool):
// recognised by parsing, and pretty-printed for `zrec view`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zrec::cli::view {

// Deepest nesting parsed; deeper text is not taken for JSON (it stays text).
inline constexpr int kMaxJsonDepth = 64;

// When `text` is one JSON object or array (RFC 8259; whitespace around it allowed), the
// same value indented by two spaces per level, strings and numbers copied as written;
// otherwise nullopt. The result is cut after max_bytes with "..." (a preview).
std::optional<std::string> pretty_json(std::string_view text, size_t max_bytes);

}  // namespace zrec::cli::view
