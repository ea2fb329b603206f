// The image-like generator of the vision workloads: 3 x H x W |u1, channel planes.
//
// Each image is a vertically shaded background (each row one value per channel), 3..8
// flat-coloured rectangles and ellipses, 1..3 textured patches tiled from a bank of 16
// 16x16 texture tiles shared by every image of a seed (structure a dictionary can learn,
// as sensor patterns and backgrounds repeat across real photos), and sparse sensor
// noise (+1 on about 1% of the bytes). The noise rate sets the entropy: on 3x224x224
// records zstd -3 gives about 14x and zstd_dict (level 15, 110 KiB dictionary) about
// 19x, the regime loaderx reports for its structured-vision workload (14.69x / 22.10x).
#include <algorithm>
#include <cstring>
#include <mutex>

#include "bench_internal.h"

namespace zrec::bench {

namespace {

constexpr int kTile = 16;
constexpr int kTiles = 16;
// +1 noise on kNoiseNumer/1024 of the bytes.
constexpr uint64_t kNoiseNumer = 10;

// The texture bank of a seed: kTiles tiles x 3 channels x 16 x 16, values 0..47.
const std::vector<uint8_t>& texture_bank(uint64_t seed) {
  static std::mutex mu;
  static uint64_t bank_seed = 0;
  static std::vector<uint8_t> bank;
  std::lock_guard<std::mutex> lock(mu);
  if (bank.empty() || bank_seed != seed) {
    Rng r(derive_seed(seed, 0xBA4C, 0));
    bank.resize(size_t{kTiles} * 3 * kTile * kTile);
    for (auto& b : bank) b = static_cast<uint8_t>(r.below(48));
    bank_seed = seed;
  }
  return bank;
}

}  // namespace

void image_size(uint64_t seed, uint64_t k, uint32_t* h, uint32_t* w) {
  Rng r(derive_seed(seed, 0x517E, k));
  *h = 176 + static_cast<uint32_t>(r.below(129));
  *w = 176 + static_cast<uint32_t>(r.below(129));
}

void generate_image(uint64_t seed, uint64_t k, uint32_t h, uint32_t w, uint8_t* out) {
  const std::vector<uint8_t>& bank = texture_bank(seed);
  Rng r(derive_seed(seed, 0x1A6E, k));
  const size_t plane = size_t{h} * w;
  // Background: a vertical shade per channel.
  for (int c = 0; c < 3; ++c) {
    const int base = 40 + static_cast<int>(r.below(160));
    const int slope = static_cast<int>(r.below(97)) - 48;
    uint8_t* p = out + c * plane;
    for (uint32_t y = 0; y < h; ++y)
      std::memset(p + size_t{y} * w, base + slope * static_cast<int>(y) / static_cast<int>(h), w);
  }
  // Flat objects.
  const int objects = 3 + static_cast<int>(r.below(6));
  for (int o = 0; o < objects; ++o) {
    const uint32_t oh = 16 + static_cast<uint32_t>(r.below(h / 2)), ow = 16 + static_cast<uint32_t>(r.below(w / 2));
    const uint32_t y0 = static_cast<uint32_t>(r.below(h - oh)), x0 = static_cast<uint32_t>(r.below(w - ow));
    const bool ellipse = r.below(2) == 1;
    uint8_t colour[3];
    for (auto& c : colour) c = static_cast<uint8_t>(r.below(256));
    for (uint32_t y = 0; y < oh; ++y) {
      for (uint32_t x = 0; x < ow; ++x) {
        if (ellipse) {
          const double dy = (y + 0.5) / oh - 0.5, dx = (x + 0.5) / ow - 0.5;
          if (dx * dx + dy * dy > 0.25) continue;
        }
        for (int c = 0; c < 3; ++c) out[c * plane + size_t{y0 + y} * w + x0 + x] = colour[c];
      }
    }
  }
  // Textured patches from the shared bank.
  const int patches = 1 + static_cast<int>(r.below(3));
  for (int q = 0; q < patches; ++q) {
    const uint32_t ph = std::min<uint32_t>(h, 32 + static_cast<uint32_t>(r.below(64)));
    const uint32_t pw = std::min<uint32_t>(w, 32 + static_cast<uint32_t>(r.below(64)));
    const uint32_t y0 = static_cast<uint32_t>(r.below(h - ph + 1)), x0 = static_cast<uint32_t>(r.below(w - pw + 1));
    const size_t tile = r.below(kTiles);
    const int base = static_cast<int>(r.below(200));
    for (int c = 0; c < 3; ++c) {
      const uint8_t* t = &bank[(tile * 3 + c) * kTile * kTile];
      for (uint32_t y = 0; y < ph; ++y)
        for (uint32_t x = 0; x < pw; ++x)
          out[c * plane + size_t{y0 + y} * w + x0 + x] =
              static_cast<uint8_t>(base + t[(y % kTile) * kTile + x % kTile]);
    }
  }
  // Sparse sensor noise: 10 bits of randomness per byte, 6 bytes per draw.
  const size_t n = 3 * plane;
  for (size_t i = 0; i < n; i += 6) {
    uint64_t bits = r.next();
    for (size_t j = i; j < std::min(n, i + 6); ++j, bits >>= 10)
      if ((bits & 1023) < kNoiseNumer) out[j] = static_cast<uint8_t>(out[j] + 1);
  }
}

}  // namespace zrec::bench
