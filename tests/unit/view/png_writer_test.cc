// Tests for encode_png(): what libpng's own reader makes of the file is the pixels given.
#include "cli/view/png_writer.h"

#include <png.h>

#include <doctest/doctest.h>

namespace zrec::cli::view {

namespace {

// Decodes with libpng's simplified API, as `format` (PNG_FORMAT_GRAY, _RGB, _RGBA).
std::vector<uint8_t> decode(const std::string& file, uint32_t format, uint32_t& width, uint32_t& height) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  REQUIRE(png_image_begin_read_from_memory(&image, file.data(), file.size()) != 0);
  image.format = format;
  std::vector<uint8_t> out(PNG_IMAGE_SIZE(image));
  REQUIRE(png_image_finish_read(&image, nullptr, out.data(), 0, nullptr) != 0);
  width = image.width;
  height = image.height;
  return out;
}

}  // namespace

TEST_SUITE("png_writer") {
  TEST_CASE("gray, RGB and RGBA pictures read back pixel for pixel") {
    for (uint32_t channels : {1u, 3u, 4u}) {
      CAPTURE(channels);
      Pixels p{37, 11, channels, {}};
      for (uint32_t i = 0; i < 37 * 11 * channels; ++i) p.data.push_back(static_cast<uint8_t>(i * 7 + i / 13));
      auto file = encode_png(p);
      REQUIRE(file.is_ok());
      CHECK(file->starts_with("\x89PNG\r\n\x1a\n"));
      uint32_t w = 0, h = 0;
      const uint32_t format = channels == 1 ? PNG_FORMAT_GRAY : channels == 3 ? PNG_FORMAT_RGB : PNG_FORMAT_RGBA;
      CHECK(decode(*file, format, w, h) == p.data);
      CHECK((w == 37 && h == 11));
    }
  }

  TEST_CASE("refuses other channel counts and sizes that do not match the data") {
    CHECK(encode_png(Pixels{2, 2, 2, std::vector<uint8_t>(8)}).status().message() ==
          "a PNG has 1, 3 or 4 channels, not 2");
    CHECK(encode_png(Pixels{2, 2, 3, std::vector<uint8_t>(11)}).status().code() == StatusCode::kInvalidArgument);
    CHECK(encode_png(Pixels{0, 2, 1, {}}).status().code() == StatusCode::kInvalidArgument);
  }
}

}  // namespace zrec::cli::view
