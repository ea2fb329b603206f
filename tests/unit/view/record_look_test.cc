// Tests for image_mime() and write_look(): how a record is shown is decided by its bytes.
#include "cli/view/record_look.h"

#include <doctest/doctest.h>

namespace zrec::cli::view {

namespace {
Schema ragged_bytes() { return Schema{DType{'|', DTypeKind::kUInt, 1, ""}, 1, std::nullopt}; }

std::string look_of(const std::string& bytes) {
  JsonWriter j;
  j.begin_object();
  const std::vector<uint64_t> dims = {bytes.size()};
  write_look(j, ragged_bytes(), dims, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), kGridCell);
  j.end_object();
  return j.str();
}
}  // namespace

TEST_SUITE("record_look") {
  TEST_CASE("image_mime knows JPEG, PNG, GIF and WebP by their first bytes, nothing else") {
    const auto mime = [](std::string s) { return image_mime(reinterpret_cast<const uint8_t*>(s.data()), s.size()); };
    CHECK(mime(std::string("\xff\xd8\xff\xe0rest", 8)) == "image/jpeg");
    CHECK(mime(std::string("\x89PNG\r\n\x1a\n\0\0", 10)) == "image/png");
    CHECK(mime("GIF89a...") == "image/gif");
    CHECK(mime(std::string("RIFF\x10\0\0\0WEBPVP8 ", 16)) == "image/webp");
    CHECK(mime(std::string("RIFF\x10\0\0\0WAVEfmt ", 16)) == "");
    CHECK(mime("<svg xmlns=\"http://www.w3.org/2000/svg\"><script/></svg>") == "");
    CHECK(mime("\x89PN") == "");
  }

  TEST_CASE("bytes are shown as text, JSON, a picture or hex") {
    CHECK(look_of("a caption\twith tab\n") == R"({"look": "text", "text": "a caption\twith tab\n"})");
    CHECK(look_of(R"({"a":1})") == R"({"look": "json", "text": "{\n  \"a\": 1\n}"})");
    CHECK(look_of("GIF87a") == R"({"look": "image", "mime": "image/gif"})");
    CHECK(look_of(std::string("\x01\x02\xff", 3)) == R"({"look": "bytes", "hex": "01 02 ff"})");
    CHECK(look_of("caf\xc3\xa9") == R"({"look": "text", "text": "café"})");
    CHECK(look_of("caf\xe9") == R"({"look": "bytes", "hex": "63 61 66 e9"})");
  }

  TEST_CASE("a uint8 picture array is pixels, read from its shape alone") {
    const Schema dense{DType{'|', DTypeKind::kUInt, 1, ""}, 3, std::vector<uint64_t>{3, 24, 32}};
    CHECK(dense_image_layout(dense)->channels == 3);
    JsonWriter j;
    j.begin_object();
    write_look(j, dense, *dense.item_shape, nullptr, 3 * 24 * 32, kGridCell);
    j.end_object();
    CHECK(j.str() == R"({"look": "pixels", "width": 32, "height": 24, "channels": 3})");
  }
}

}  // namespace zrec::cli::view
