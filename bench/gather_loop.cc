// The timed loop: measurements interleaved in rounds over one shared id stream, so a
// noisy machine slows every measurement alike and the same-run ratios hold.
#include "bench_internal.h"

namespace zrec::bench {

namespace {

// The k-th batch of the id stream (uniform IID ids, with replacement).
void batch_ids(const LoopOptions& o, uint64_t k, std::vector<uint64_t>& ids) {
  Rng r(derive_seed(o.seed, 0x1D5, k));
  for (auto& id : ids) id = r.below(o.records);
}

}  // namespace

Result<std::vector<Throughput>> run_interleaved(std::span<Measurement* const> measurements, const LoopOptions& o) {
  std::vector<Throughput> out(measurements.size());
  std::vector<std::vector<double>> times(measurements.size());
  std::vector<uint64_t> next_batch(measurements.size(), 0);
  std::vector<uint64_t> ids(o.batch);
  const uint32_t rounds = std::max<uint32_t>(1, o.rounds);
  const double slice = o.seconds / rounds;
  for (uint32_t round = 0; round < rounds; ++round) {
    for (size_t m = 0; m < measurements.size(); ++m) {
      Throughput& t = out[m];
      double spent = 0;
      do {
        ZREC_RETURN_IF_ERROR(o.control.check());
        batch_ids(o, next_batch[m]++, ids);
        ZREC_RETURN_IF_ERROR(measurements[m]->before_batch());
        const auto t0 = Clock::now();
        ZREC_ASSIGN_OR_RETURN(uint64_t bytes, measurements[m]->run_batch(ids));
        const double dt = seconds_since(t0);
        spent += dt;
        t.seconds += dt;
        t.bytes += bytes;
        t.records += ids.size();
        ++t.batches;
        times[m].push_back(dt);
      } while (spent < slice);
    }
  }
  for (size_t m = 0; m < measurements.size(); ++m) {
    out[m].measured = true;
    fill_percentiles(times[m], out[m]);
  }
  return out;
}

}  // namespace zrec::bench
