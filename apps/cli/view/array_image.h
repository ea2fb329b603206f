// uint8 arrays that are pictures: how `zrec view` recognises them by shape and turns them
// into rows of pixels (smaller ones for thumbnails) for png_writer.h.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zrec/dtype.h"

namespace zrec::cli::view {

struct ImageLayout {
  uint64_t height = 0, width = 0;
  uint32_t channels = 1;        // 1 gray, 3 RGB, 4 RGBA
  bool channels_first = false;  // (C, H, W) rather than (H, W, C) or (H, W)
};

// The picture a record of `dtype` and `dims` is, if any: uint8 ('|u1') shaped (H, W),
// (H, W, C) or (C, H, W) with C in {1, 3, 4} (the last axis wins when both could be
// channels: (3, 4, 3) is 3 rows of 4 RGB pixels), H and W at least 1 and H * W below 2^31.
std::optional<ImageLayout> image_layout(const DType& dtype, std::span<const uint64_t> dims);

struct Pixels {
  uint32_t width = 0, height = 0, channels = 1;
  std::vector<uint8_t> data;  // rows top to bottom, channels interleaved: height * width * channels
};

// The record's pixels, interleaved, scaled down (never up) so that neither side exceeds
// `max_side` (each output pixel the mean of the source pixels it covers, rounded), with
// the aspect ratio kept (each side at least 1). `data` holds height * width * channels
// bytes in `layout`'s order.
Pixels fit_pixels(const uint8_t* data, const ImageLayout& layout, uint32_t max_side);

}  // namespace zrec::cli::view
