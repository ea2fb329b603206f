// A zstd dictionary for the zstd_dict stores of the benchmark, trained the way
// `zstd --train` does (ZDICT_trainFromBuffer, 112640 bytes) on a deterministic sample.
#include <zdict.h>

#include <algorithm>

#include "bench/bench_internal.h"

namespace zrec::bench {

Result<std::vector<uint8_t>> train_corpus_dictionary(const Corpus& corpus) {
  constexpr uint64_t kMaxSamples = 2000;
  constexpr uint64_t kMaxSampleBytes = uint64_t{64} << 20;
  constexpr size_t kDictBytes = 112640;
  const uint64_t n = corpus.records();
  // Every step-th record, so the sample spans the corpus.
  const uint64_t step = std::max<uint64_t>(1, n / kMaxSamples);
  std::vector<uint8_t> samples;
  std::vector<size_t> sizes;
  for (uint64_t k = 0; k < n && sizes.size() < kMaxSamples; k += step) {
    const uint64_t len = corpus.logic_length(k);
    if (samples.size() + len > kMaxSampleBytes) break;
    samples.resize(samples.size() + len);
    corpus.logical_record(k, samples.data() + samples.size() - len);
    sizes.push_back(len);
  }
  std::vector<uint8_t> dict(kDictBytes);
  const size_t r = ZDICT_trainFromBuffer(dict.data(), dict.size(), samples.data(), sizes.data(),
                                         static_cast<unsigned>(sizes.size()));
  if (ZDICT_isError(r))
    return invalid_argument(std::string("cannot train a dictionary on ") + std::to_string(sizes.size()) +
                            " records: " + ZDICT_getErrorName(r));
  dict.resize(r);
  return dict;
}

}  // namespace zrec::bench
