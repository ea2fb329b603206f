// File signatures (see file_signature.h).
#include "cli/formats/file_signature.h"

#include <cstring>

namespace zrec::cli {

namespace {

struct Known {
  std::string_view magic;
  size_t at;  // where the magic starts
  FileSignature signature;
};

// (Magic strings hold NUL bytes: sizes are given, not taken from strlen.)
const Known kKnown[] = {
    {std::string_view("\xff\xd8\xff", 3), 0, {"JPEG image", "image/jpeg"}},
    {std::string_view("\x89PNG\r\n\x1a\n", 8), 0, {"PNG image", "image/png"}},
    {std::string_view("GIF87a", 6), 0, {"GIF image", "image/gif"}},
    {std::string_view("GIF89a", 6), 0, {"GIF image", "image/gif"}},
    {std::string_view("WEBP", 4), 8, {"WebP image", "image/webp"}},  // after "RIFF" and a size
    {std::string_view("\x1f\x8b", 2), 0, {"gzip data", ""}},
    {std::string_view("\x28\xb5\x2f\xfd", 4), 0, {"zstd frame", ""}},
    {std::string_view("PK\x03\x04", 4), 0, {"zip archive", ""}},
    {std::string_view("%PDF-", 5), 0, {"PDF document", ""}},
    {std::string_view("\x93NUMPY", 6), 0, {".npy array", ""}},
    {std::string_view("fLaC", 4), 0, {"FLAC audio", ""}},
    {std::string_view("OggS", 4), 0, {"Ogg media", ""}},
    {std::string_view("WAVE", 4), 8, {"WAV audio", ""}},  // after "RIFF" and a size
};

bool has(std::span<const uint8_t> bytes, std::string_view magic, size_t at) {
  return bytes.size() >= at + magic.size() && std::memcmp(bytes.data() + at, magic.data(), magic.size()) == 0;
}

}  // namespace

const FileSignature* file_signature(std::span<const uint8_t> bytes) {
  for (const Known& k : kKnown) {
    if (k.at == 8 && !has(bytes, "RIFF", 0)) continue;
    if (has(bytes, k.magic, k.at)) return &k.signature;
  }
  return nullptr;
}

bool looks_like_text(std::span<const uint8_t> bytes) {
  for (size_t i = 0; i < bytes.size();) {
    const uint8_t c = bytes[i];
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return false;
      if (c == 0x7f) return false;
      ++i;
      continue;
    }
    // A UTF-8 sequence: its lead byte says how many continuation bytes follow.
    const size_t n = (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 0;
    if (n == 0 || c == 0xc0 || c == 0xc1 || c > 0xf4) return false;
    for (size_t k = 1; k <= n; ++k)
      if (i + k >= bytes.size() || (bytes[i + k] & 0xc0) != 0x80) return false;
    i += n + 1;
  }
  return true;
}

}  // namespace zrec::cli
