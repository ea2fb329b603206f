// Log-linear histogram behind SizeStats (see record_stats.h for the precision).
#include "cli/report/record_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace zrec::cli {

namespace {
constexpr int kSubBits = 10;                               // 1024 buckets per power of two
constexpr uint64_t kExactBelow = uint64_t{2} << kSubBits;  // 2048: one bucket per value
constexpr int kOctaves = 64 - (kSubBits + 1);              // powers of two from 2^11 to 2^63

// The power of two of v >= kExactBelow, counted from 2^11, and its sub-bucket there.
int octave_of(uint64_t v) { return 63 - std::countl_zero(v) - (kSubBits + 1); }
size_t sub_of(uint64_t v, int octave) {
  return static_cast<size_t>((v >> (octave + 1)) & ((uint64_t{1} << kSubBits) - 1));
}

// The smallest value that falls in sub-bucket `sub` of `octave`.
uint64_t bucket_floor(int octave, size_t sub) {
  const int top = octave + kSubBits + 1;
  return (uint64_t{1} << top) | (uint64_t{sub} << (top - kSubBits));
}
}  // namespace

SizeStats::SizeStats() : exact_(kExactBelow, 0), octaves_(kOctaves) {}

void SizeStats::add(uint64_t value) {
  if (value < kExactBelow) {
    ++exact_[value];
  } else {
    const int octave = octave_of(value);
    std::vector<uint64_t>& block = octaves_[octave];
    if (block.empty()) block.resize(size_t{1} << kSubBits, 0);
    ++block[sub_of(value, octave)];
  }
  ++count_;
  min_ = std::min(min_, value);
  max_ = std::max(max_, value);
  total_ += value;
}

uint64_t SizeStats::percentile(double p) const {
  if (count_ == 0) return 0;
  // Rank in 1..count_; the small epsilon keeps p*n that is an integer in exact arithmetic
  // (e.g. 0.99 * 100) from rounding up past it.
  double exact = p / 100.0 * double(count_);
  uint64_t rank = static_cast<uint64_t>(std::ceil(exact - 1e-9 * exact));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t seen = 0;
  for (size_t v = 0; v < exact_.size(); ++v) {
    seen += exact_[v];
    if (seen >= rank) return std::clamp<uint64_t>(v, min(), max_);
  }
  for (int octave = 0; octave < kOctaves; ++octave) {
    const std::vector<uint64_t>& block = octaves_[octave];
    for (size_t sub = 0; sub < block.size(); ++sub) {
      seen += block[sub];
      if (seen >= rank) return std::clamp(bucket_floor(octave, sub), min(), max_);
    }
  }
  return max_;
}

uint64_t SizeStats::histogram_bin_width(size_t bins) const {
  if (count_ == 0 || bins == 0) return 1;
  // ceil((span + 1) / bins) without overflowing at span = 2^64 - 1.
  return (max_ - min_) / bins + 1;
}

std::vector<uint64_t> SizeStats::histogram(size_t bins) const {
  if (count_ == 0 || bins == 0) return {};
  const uint64_t width = histogram_bin_width(bins);
  std::vector<uint64_t> out((max_ - min_) / width + 1, 0);
  const auto add = [&](uint64_t value, uint64_t n) {
    if (n != 0) out[(std::clamp(value, min(), max_) - min_) / width] += n;
  };
  for (size_t v = 0; v < exact_.size(); ++v) add(v, exact_[v]);
  for (int octave = 0; octave < kOctaves; ++octave)
    for (size_t sub = 0; sub < octaves_[octave].size(); ++sub) add(bucket_floor(octave, sub), octaves_[octave][sub]);
  return out;
}

SizeStats::Drawn SizeStats::drawn_histogram(size_t bins) const {
  Drawn d;
  if (count_ == 0 || bins == 0) return d;
  const uint64_t low = std::max<uint64_t>(min_, 1);
  if (max_ < kLogSpread * low) {
    const uint64_t width = histogram_bin_width(bins);
    d.counts = histogram(bins);
    for (size_t b = 0; b < d.counts.size(); ++b) d.edges.push_back(min_ + b * width);
    d.edges.push_back(max_ + 1);  // the last bin ends at the largest value
    return d;
  }
  d.log = true;
  // Edges low * r^b, r = ((max + 1) / low)^(1 / bins), rounded up to integers and kept
  // strictly increasing; a zero (a store can't hold one) gets the first bin.
  const double ratio = std::pow(static_cast<double>(max_) + 1.0, 1.0 / static_cast<double>(bins)) /
                       std::pow(static_cast<double>(low), 1.0 / static_cast<double>(bins));
  d.edges.push_back(min_);
  double edge = static_cast<double>(low);
  for (size_t b = 1; b < bins; ++b) {
    edge *= ratio;
    const uint64_t e = static_cast<uint64_t>(std::ceil(edge));
    if (e > d.edges.back() && e <= max_) d.edges.push_back(e);
  }
  d.edges.push_back(max_ + 1);
  d.counts.assign(d.edges.size() - 1, 0);
  const auto add = [&](uint64_t value, uint64_t n) {
    if (n == 0) return;
    value = std::clamp(value, min(), max_);
    const size_t b = static_cast<size_t>(std::upper_bound(d.edges.begin(), d.edges.end(), value) - d.edges.begin()) - 1;
    d.counts[b] += n;
  };
  for (size_t v = 0; v < exact_.size(); ++v) add(v, exact_[v]);
  for (int octave = 0; octave < kOctaves; ++octave)
    for (size_t sub = 0; sub < octaves_[octave].size(); ++sub) add(bucket_floor(octave, sub), octaves_[octave][sub]);
  return d;
}

}  // namespace zrec::cli
