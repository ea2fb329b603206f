// encode_png (see png_writer.h).
#include "cli/view/png_writer.h"

#include <png.h>

#include <csetjmp>
#include <vector>

namespace zrec::cli::view {

namespace {

void append_to_string(png_structp png, png_bytep data, png_size_t n) {
  static_cast<std::string*>(png_get_io_ptr(png))->append(reinterpret_cast<const char*>(data), n);
}

void no_flush(png_structp) {}

}  // namespace

Result<std::string> encode_png(const Pixels& pixels) {
  int color_type;
  switch (pixels.channels) {
    case 1:
      color_type = PNG_COLOR_TYPE_GRAY;
      break;
    case 3:
      color_type = PNG_COLOR_TYPE_RGB;
      break;
    case 4:
      color_type = PNG_COLOR_TYPE_RGBA;
      break;
    default:
      return invalid_argument("a PNG has 1, 3 or 4 channels, not " + std::to_string(pixels.channels));
  }
  if (pixels.width == 0 || pixels.height == 0 ||
      pixels.data.size() != uint64_t{pixels.width} * pixels.height * pixels.channels)
    return invalid_argument("an image of " + std::to_string(pixels.width) + "x" + std::to_string(pixels.height) +
                            " pixels cannot be encoded");
  // Everything the error path touches lives outside the setjmp: libpng reports errors by
  // longjmp back to it.
  std::string out;
  std::vector<png_bytep> rows(pixels.height);
  const size_t stride = size_t{pixels.width} * pixels.channels;
  for (uint32_t y = 0; y < pixels.height; ++y) rows[y] = const_cast<png_bytep>(pixels.data.data() + size_t{y} * stride);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  if (png == nullptr) return io_error("libpng: cannot start an encoder");
  png_infop info = png_create_info_struct(png);
  if (info == nullptr || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return io_error("libpng: cannot encode an image of " + std::to_string(pixels.width) + "x" +
                    std::to_string(pixels.height) + " pixels");
  }
  png_set_write_fn(png, &out, append_to_string, no_flush);
  png_set_compression_level(png, 3);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_SUB);
  png_set_IHDR(png, info, pixels.width, pixels.height, 8, color_type, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace zrec::cli::view
