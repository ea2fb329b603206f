// Tests for apps/cli/formats/file_signature: what a record of bytes is, from its first
// bytes, and whether it reads as text.
#include "cli/formats/file_signature.h"

#include <string>
#include <string_view>

#include <doctest/doctest.h>

namespace zrec::cli {

namespace {

std::span<const uint8_t> bytes(std::string_view s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

std::string kind(std::string_view s) {
  const FileSignature* f = file_signature(bytes(s));
  return f == nullptr ? "" : std::string(f->kind) + "|" + std::string(f->mime);
}

}  // namespace

TEST_SUITE("file_signature") {
  TEST_CASE("known formats by their first bytes, pictures with their MIME type") {
    CHECK(kind(std::string_view("\x89PNG\r\n\x1a\n....", 12)) == "PNG image|image/png");
    CHECK(kind("\xff\xd8\xff\xe0") == "JPEG image|image/jpeg");
    CHECK(kind("GIF89a..") == "GIF image|image/gif");
    CHECK(kind("RIFF\x10\x00\x00\x00WEBPVP8 ") == "");  // (a NUL ends the literal: no WEBP seen)
    CHECK(kind(std::string_view("RIFF\x10\x00\x00\x00WEBPVP8 ", 16)) == "WebP image|image/webp");
    CHECK(kind(std::string_view("RIFF\x10\x00\x00\x00WAVEfmt ", 16)) == "WAV audio|");
    CHECK(kind("\x1f\x8b\x08") == "gzip data|");
    CHECK(kind("\x28\xb5\x2f\xfd") == "zstd frame|");
    CHECK(kind("%PDF-1.7") == "PDF document|");
    // Too short for the magic, or none: nothing. SVG is a document, never a picture.
    CHECK(kind("\x89PN") == "");
    CHECK(kind("<svg xmlns='http://www.w3.org/2000/svg'/>") == "");
    CHECK(kind("") == "");
  }

  TEST_CASE("text is well-formed UTF-8 without control bytes but tab, newline and CR") {
    CHECK(looks_like_text(bytes("a caption\twith tabs\r\n")));
    CHECK(looks_like_text(bytes("na\xc3\xafve caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")));
    CHECK(looks_like_text(bytes("")));
    CHECK_FALSE(looks_like_text(bytes(std::string_view("a\0b", 3))));
    CHECK_FALSE(looks_like_text(bytes("bell\x07")));
    CHECK_FALSE(looks_like_text(bytes("del\x7f")));
    CHECK_FALSE(looks_like_text(bytes("\xc3")));              // a sequence cut short
    CHECK_FALSE(looks_like_text(bytes("\xe2\x82")));          // another
    CHECK_FALSE(looks_like_text(bytes("\xc0\xaf")));          // an overlong '/'
    CHECK_FALSE(looks_like_text(bytes("\xf5\x80\x80\x80")));  // past U+10FFFF
    CHECK_FALSE(looks_like_text(bytes("\x80 alone")));        // a continuation byte first
  }
}

}  // namespace zrec::cli
