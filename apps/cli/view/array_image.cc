// Recognising and scaling uint8 pictures (see array_image.h).
#include "cli/view/array_image.h"

#include <algorithm>

namespace zrec::cli::view {

std::optional<ImageLayout> image_layout(const DType& dtype, std::span<const uint64_t> dims) {
  if (dtype.kind != DTypeKind::kUInt || dtype.itemsize != 1) return std::nullopt;
  const auto is_channels = [](uint64_t c) { return c == 1 || c == 3 || c == 4; };
  ImageLayout l;
  if (dims.size() == 2) {
    l = {dims[0], dims[1], 1, false};
  } else if (dims.size() == 3 && is_channels(dims[2])) {
    l = {dims[0], dims[1], static_cast<uint32_t>(dims[2]), false};
  } else if (dims.size() == 3 && is_channels(dims[0])) {
    l = {dims[1], dims[2], static_cast<uint32_t>(dims[0]), true};
  } else {
    return std::nullopt;
  }
  if (l.height == 0 || l.width == 0 || l.height >= (uint64_t{1} << 31) / l.width) return std::nullopt;
  return l;
}

Pixels fit_pixels(const uint8_t* data, const ImageLayout& layout, uint32_t max_side) {
  const uint64_t h = layout.height, w = layout.width, c = layout.channels;
  const uint64_t longest = std::max(h, w);
  const uint64_t side = std::max<uint64_t>(1, max_side);
  Pixels out;
  out.channels = layout.channels;
  out.height = static_cast<uint32_t>(longest > side ? std::max<uint64_t>(1, h * side / longest) : h);
  out.width = static_cast<uint32_t>(longest > side ? std::max<uint64_t>(1, w * side / longest) : w);
  out.data.resize(uint64_t{out.height} * out.width * c);
  // Source element (y, x, ch) in the record's order.
  const auto at = [&](uint64_t y, uint64_t x, uint64_t ch) -> uint32_t {
    return layout.channels_first ? data[(ch * h + y) * w + x] : data[(y * w + x) * c + ch];
  };
  if (out.height == h && out.width == w) {
    for (uint64_t y = 0; y < h; ++y)
      for (uint64_t x = 0; x < w; ++x)
        for (uint64_t ch = 0; ch < c; ++ch) out.data[(y * w + x) * c + ch] = static_cast<uint8_t>(at(y, x, ch));
    return out;
  }
  // Box filter: output pixel (oy, ox) averages source rows [oy*h/oh, (oy+1)*h/oh) and
  // columns likewise (each range at least one wide).
  std::vector<uint64_t> sums(uint64_t{out.width} * c);
  for (uint64_t oy = 0; oy < out.height; ++oy) {
    const uint64_t y0 = oy * h / out.height, y1 = std::max(y0 + 1, (oy + 1) * h / out.height);
    std::fill(sums.begin(), sums.end(), 0);
    for (uint64_t ox = 0; ox < out.width; ++ox) {
      const uint64_t x0 = ox * w / out.width, x1 = std::max(x0 + 1, (ox + 1) * w / out.width);
      for (uint64_t y = y0; y < y1; ++y)
        for (uint64_t x = x0; x < x1; ++x)
          for (uint64_t ch = 0; ch < c; ++ch) sums[ox * c + ch] += at(y, x, ch);
      const uint64_t n = (y1 - y0) * (x1 - x0);
      for (uint64_t ch = 0; ch < c; ++ch)
        out.data[(oy * out.width + ox) * c + ch] = static_cast<uint8_t>((sums[ox * c + ch] + n / 2) / n);
    }
  }
  return out;
}

}  // namespace zrec::cli::view
