// Tests for image_layout() and fit_pixels(): which uint8 arrays are pictures, and their
// pixels interleaved and box-filtered, value for value.
#include "cli/view/array_image.h"

#include <numeric>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::cli::view {

namespace {
const DType kU1{'|', DTypeKind::kUInt, 1, ""};
std::optional<ImageLayout> layout(std::vector<uint64_t> dims, DType dtype = kU1) { return image_layout(dtype, dims); }
}  // namespace

TEST_SUITE("array_image") {
  TEST_CASE("image_layout: (H, W), (H, W, C) and (C, H, W) uint8 arrays, the last axis first") {
    CHECK(layout({24, 32})->channels == 1);
    auto hwc = layout({24, 32, 3});
    CHECK((hwc->height == 24 && hwc->width == 32 && hwc->channels == 3 && !hwc->channels_first));
    auto chw = layout({4, 24, 32});
    CHECK((chw->height == 24 && chw->width == 32 && chw->channels == 4 && chw->channels_first));
    auto both = layout({3, 4, 3});  // channels-last wins
    CHECK((both->height == 3 && both->width == 4 && !both->channels_first));
    CHECK(!layout({24, 32, 2}));
    CHECK(!layout({5}));
    CHECK(!layout({2, 3, 4, 5}));
    CHECK(!layout({0, 32}));
    CHECK(!layout({24, 32}, DType{'<', DTypeKind::kUInt, 2, ""}));
    CHECK(!layout({24, 32}, DType{'|', DTypeKind::kInt, 1, ""}));
    CHECK(!layout({uint64_t{1} << 16, uint64_t{1} << 15}));  // 2^31 pixels
  }

  TEST_CASE("fit_pixels interleaves a channels-first picture unchanged when it fits") {
    std::vector<uint8_t> chw(3 * 2 * 2);
    std::iota(chw.begin(), chw.end(), 0);  // channel c, row y, column x = 4c + 2y + x
    const Pixels p = fit_pixels(chw.data(), {2, 2, 3, true}, 160);
    CHECK((p.width == 2 && p.height == 2 && p.channels == 3));
    CHECK(p.data == std::vector<uint8_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  }

  TEST_CASE("fit_pixels box-filters down to max_side, rounding each mean") {
    // 4 x 6 gray: values 0..23, scaled to fit 3: 2 x 3 output, each a 2 x 2 box.
    std::vector<uint8_t> gray(24);
    std::iota(gray.begin(), gray.end(), 0);
    const Pixels p = fit_pixels(gray.data(), {4, 6, 1, false}, 3);
    CHECK((p.width == 3 && p.height == 2));
    // Box (0,0): 0 1 6 7 -> 14/4 = 3.5 -> 4 (rounded half up); (0,1): 2 3 8 9 -> 5.5 -> 6.
    CHECK(p.data == std::vector<uint8_t>{4, 6, 8, 16, 18, 20});
    // A long thin picture keeps at least one pixel across.
    std::vector<uint8_t> thin(1000, 200);
    const Pixels t = fit_pixels(thin.data(), {1, 1000, 1, false}, 10);
    CHECK((t.width == 10 && t.height == 1 && t.data == std::vector<uint8_t>(10, 200)));
  }
}

}  // namespace zrec::cli::view
