// Record-size statistics for `zrec info`: min, p50, p99, max of a stream of sizes, in
// bounded memory whatever the number of records.
//
// Percentiles use the nearest-rank definition (the value at rank ceil(p/100 * n) of the
// sorted sizes; NumPy: np.percentile(x, p, method="inverted_cdf")). Sizes are counted in
// a log-linear histogram: exact below 2048, and above that in buckets 1/1024 of their
// power of two wide, so a percentile is the exact value or at most 0.1% below it (the
// bucket's smallest value, never below min). min, max and the total are always exact.
// The histogram holds at most about 56,000 counters (440 KiB), however many values it
// sees; a power of two's 1024 counters are allocated when a value first falls in it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace zrec::cli {

class SizeStats {
 public:
  SizeStats();
  void add(uint64_t value);
  uint64_t count() const { return count_; }
  uint64_t min() const { return count_ ? min_ : 0; }
  uint64_t max() const { return max_; }
  uint64_t total() const { return total_; }
  // Nearest-rank percentile, p in (0, 100]; 0 for no values.
  uint64_t percentile(double p) const;
  // Counts of the values in `bins` equal-width bins over [min, max] (`zrec view`'s drawn
  // histograms): bin b holds values from min + b * w to min + (b + 1) * w - 1, where
  // w = ceil((max - min + 1) / bins); fewer bins when the range has fewer values. A value
  // above 2047 is counted at its bucket's smallest value (at most 0.1% below it). Empty
  // for no values.
  std::vector<uint64_t> histogram(size_t bins) const;
  // The width w of histogram(bins)'s bins.
  uint64_t histogram_bin_width(size_t bins) const;

  // A histogram to draw (`zrec view`): equal-width bins (histogram()) when the sizes
  // span less than kLogSpread times their smallest, else bins of equal width on a log
  // scale, whose edges grow by a constant factor from min to max (heavy-tailed sizes,
  // which equal-width bins would pile into the first bin). Bin b holds the values in
  // [edges[b], edges[b + 1]); edges has one more entry than counts, the last max + 1.
  static constexpr uint64_t kLogSpread = 64;
  struct Drawn {
    bool log = false;
    std::vector<uint64_t> edges;
    std::vector<uint64_t> counts;
  };
  Drawn drawn_histogram(size_t bins) const;

 private:
  // Performance note: record sizes cluster in a few powers of two, and zeroing all 53
  // blocks up front (4 histograms) cost `zrec info` 6 ms of page faults on a VM, a
  // third of its run on a small store.
  std::vector<uint64_t> exact_;                 // one counter per value below 2048
  std::vector<std::vector<uint64_t>> octaves_;  // per power of two from 2^11: empty or 1024
  uint64_t count_ = 0, min_ = UINT64_MAX, max_ = 0, total_ = 0;
};

}  // namespace zrec::cli
