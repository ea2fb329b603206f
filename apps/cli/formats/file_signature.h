// What a record of bytes is, told by its first bytes (the signatures of file formats
// that datasets store whole: pictures, compressed files, archives, documents), for
// renderings that must not print such a record as text: zrec view shows a picture,
// `zrec cat` to a terminal names it.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace zrec::cli {

struct FileSignature {
  std::string_view kind;  // "PNG image", "gzip data", ...
  std::string_view mime;  // "image/png" for pictures a browser shows; empty otherwise
};

// The signature `bytes` start with, or nullptr. SVG is never a picture here: it is a
// document that can run script.
const FileSignature* file_signature(std::span<const uint8_t> bytes);

// Whether `bytes` read as text: well-formed UTF-8 with no control bytes other than
// tab, newline and carriage return.
bool looks_like_text(std::span<const uint8_t> bytes);

}  // namespace zrec::cli
