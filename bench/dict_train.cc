// The dictionary of the benchmark's zstd_dict stores: trained by the same code and
// preset as `zrec train-dict` and `zrec recompress --codec zstd_dict` use by default
// (the balanced tier, seed 0), so the bench measures the stores users get.
// (man zrec-bench, "Workloads")
#include <algorithm>

#include "zrec/dict.h"

#include "bench_internal.h"

namespace zrec::bench {

namespace {

// The generated corpus seen as a population of logical records to sample.
class CorpusRecords final : public RecordSource {
 public:
  explicit CorpusRecords(const Corpus& corpus) : corpus_(corpus) {}
  uint64_t count() const override { return corpus_.records(); }
  Status lengths(std::span<const uint64_t> ids, uint64_t* out) override {
    for (size_t k = 0; k < ids.size(); ++k) out[k] = corpus_.logic_length(ids[k]);
    return Status::ok();
  }
  Status read(std::span<const uint64_t> ids, uint64_t max_bytes,
              const std::function<Status(size_t k, const uint8_t* bytes, size_t n)>& fn) override {
    for (size_t k = 0; k < ids.size(); ++k) {
      record_.resize(corpus_.logic_length(ids[k]));
      corpus_.logical_record(ids[k], record_.data());
      ZREC_RETURN_IF_ERROR(fn(k, record_.data(), std::min<uint64_t>(record_.size(), max_bytes)));
    }
    return Status::ok();
  }

 private:
  const Corpus& corpus_;
  std::vector<uint8_t> record_;
};

}  // namespace

Result<std::vector<uint8_t>> train_corpus_dictionary(const Corpus& corpus, std::shared_ptr<Lanes> lanes) {
  CorpusRecords source(corpus);
  TrainOptions options = train_options(DictTier::kBalanced);
  // A small corpus (a smoke run) gets a dictionary of a tenth of its sampled bytes, the
  // size train-dict suggests, instead of an error.
  uint64_t sampled = 0;
  for (uint64_t k = 0; k < corpus.records() && sampled < options.sample_bytes; ++k)
    sampled += std::min(corpus.logic_length(k), options.max_sample_bytes);
  options.dict_bytes = std::clamp<uint64_t>(std::min(sampled, options.sample_bytes) / 10, 256, options.dict_bytes);
  TrainReport report;
  return train_dictionary(source, options, &report, Context{.lanes = std::move(lanes)});
}

}  // namespace zrec::bench
