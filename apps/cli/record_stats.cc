// Log-linear histogram behind SizeStats (see record_stats.h for the precision).
#include "cli/record_stats.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace zrec::cli {

namespace {
constexpr int kSubBits = 10;                        // 1024 buckets per power of two
constexpr uint64_t kExactBelow = uint64_t{2} << kSubBits;  // 2048: one bucket per value
constexpr int kOctaves = 64 - (kSubBits + 1);       // powers of two from 2^11 to 2^63

size_t bucket_of(uint64_t v) {
  if (v < kExactBelow) return static_cast<size_t>(v);
  const int top = 63 - std::countl_zero(v);  // >= kSubBits + 1
  const int shift = top - kSubBits;
  const uint64_t sub = (v >> shift) & ((uint64_t{1} << kSubBits) - 1);
  return static_cast<size_t>(kExactBelow + uint64_t(top - kSubBits - 1) * (uint64_t{1} << kSubBits) + sub);
}

// The smallest value that falls in bucket b.
uint64_t bucket_floor(size_t b) {
  if (b < kExactBelow) return b;
  const uint64_t k = b - kExactBelow;
  const int top = static_cast<int>(k >> kSubBits) + kSubBits + 1;
  const uint64_t sub = k & ((uint64_t{1} << kSubBits) - 1);
  return (uint64_t{1} << top) | (sub << (top - kSubBits));
}
}  // namespace

SizeStats::SizeStats() : buckets_(kExactBelow + size_t{kOctaves} * (size_t{1} << kSubBits), 0) {}

void SizeStats::add(uint64_t value) {
  ++buckets_[bucket_of(value)];
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
  for (size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) return std::clamp(bucket_floor(b), min(), max_);
  }
  return max_;
}

}  // namespace zrec::cli
