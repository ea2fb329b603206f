// Latency percentiles of a measurement, from its per-batch times.
#include <algorithm>
#include <cmath>

#include "bench_internal.h"

namespace zrec::bench {

namespace {
// Nearest-rank percentile of sorted values (q in (0, 1]).
double nearest_rank(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(q * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}
}  // namespace

void fill_percentiles(std::vector<double>& batch_seconds, Throughput& t) {
  std::sort(batch_seconds.begin(), batch_seconds.end());
  t.p50_ms = 1e3 * nearest_rank(batch_seconds, 0.50);
  t.p95_ms = 1e3 * nearest_rank(batch_seconds, 0.95);
  t.p99_ms = 1e3 * nearest_rank(batch_seconds, 0.99);
}

}  // namespace zrec::bench
