// `--codec auto` (include/zrec/codec_choice.h): a seeded sample measured in every codec
// that may pay, then pick_codec's rule.
#include "zrec/codec_choice.h"

#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "format/layout.h"
#include "store/sample_indices.h"

namespace zrec {

namespace {

// Records measured for raw vs zstd where no dictionary is trained: at most this many, of
// at most this many bytes in all, each up to its first MiB (a frame's ratio shows there).
constexpr uint64_t kMeasureSamples = 1000;
constexpr uint64_t kMeasureBytes = uint64_t{16} << 20;
constexpr uint64_t kMeasureRecordBytes = uint64_t{1} << 20;
// The dictionary is trained as `zrec train-dict --tier small` does (32 KiB, 4 MiB of
// samples, one candidate), smaller when the sample could not fill ten times that (a
// dictionary bigger than a tenth of its samples overfits them), none under 1 KiB.
// Performance note (tokens-var, 200000 records of 548 bytes, 2 cores): the small tier
// trained in 1.0 s to a held-out ratio of 2.33x, the balanced one (110 KiB, 16 MiB,
// 6 candidates) in 10.2 s to 2.36x; the first window of a store pays it once.
constexpr uint64_t kMinDictBytes = 1024;

// The records at `ids` (ascending), each up to max_bytes, one zstd frame each at level 3.
Status measure_zstd(RecordSource& source, const std::vector<uint64_t>& ids, ChoiceSizes& sizes) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (cctx == nullptr) return io_error("cannot allocate a zstd compression context");
  std::vector<uint8_t> out;
  Status s = source.read(ids, kMeasureRecordBytes, [&](size_t, const uint8_t* bytes, size_t n) -> Status {
    out.resize(ZSTD_compressBound(n));
    const size_t r = ZSTD_compressCCtx(cctx, out.data(), out.size(), bytes, n, format::kZstdLevel);
    if (ZSTD_isError(r)) return io_error(std::string("zstd compression failed: ") + ZSTD_getErrorName(r));
    ++sizes.records;
    sizes.raw += n;
    sizes.zstd += r;
    return Status::ok();
  });
  ZSTD_freeCCtx(cctx);
  return s;
}

class WindowSource : public RecordSource {
 public:
  WindowSource(const Schema& schema, std::span<const RecordRef> records)
      : prefix_(schema.is_dense() ? 0 : schema.shape_prefix_bytes()), records_(records) {}
  uint64_t count() const override { return records_.size(); }
  Status lengths(std::span<const uint64_t> ids, uint64_t* out) override {
    for (size_t k = 0; k < ids.size(); ++k) out[k] = prefix_ + records_[ids[k]].size;
    return Status::ok();
  }
  Status read(std::span<const uint64_t> ids, uint64_t max_bytes,
              const std::function<Status(size_t, const uint8_t*, size_t)>& fn) override {
    for (size_t k = 0; k < ids.size(); ++k) {
      const RecordRef& r = records_[ids[k]];
      const uint64_t n = std::min(prefix_ + r.size, max_bytes);
      if (prefix_ == 0) {
        ZREC_RETURN_IF_ERROR(fn(k, r.data, n));
        continue;
      }
      logical_.resize(n);  // the shape prefix, then the payload, as the store holds it
      std::memcpy(logical_.data(), r.dims, std::min(prefix_, n));
      if (n > prefix_) std::memcpy(logical_.data() + prefix_, r.data, n - prefix_);
      ZREC_RETURN_IF_ERROR(fn(k, logical_.data(), n));
    }
    return Status::ok();
  }

 private:
  uint64_t prefix_;
  std::span<const RecordRef> records_;
  std::vector<uint8_t> logical_;
};

}  // namespace

Codec pick_codec(const ChoiceSizes& s) {
  if (s.records == 0) return Codec::kZstd;
  const auto raw = static_cast<double>(s.raw);
  if (s.dict > 0 && s.dict <= kAutoDictShare * static_cast<double>(s.zstd) && s.dict <= kAutoDictShare * raw)
    return Codec::kZstdDict;
  if (static_cast<double>(s.zstd) <= kAutoZstdShare * raw) return Codec::kZstd;
  return Codec::kRaw;
}

Result<CodecChoice> choose_codec(RecordSource& source, const Context& ctx) {
  CodecChoice c;
  c.population = source.count();
  if (c.population == 0) return c;
  // The mean size of the records (whether a dictionary is worth training), and the
  // prefix of the same random sample that fits kMeasureBytes (measured otherwise).
  std::vector<uint64_t> ids = store::sample_indices(c.population, kMeasureSamples, 0);
  std::vector<uint64_t> lengths(ids.size());
  ZREC_RETURN_IF_ERROR(source.lengths(ids, lengths.data()));
  uint64_t total = 0, measured = 0;
  size_t fit = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    total += lengths[k];
    const uint64_t n = std::min(lengths[k], kMeasureRecordBytes);
    if (fit == k && (k == 0 || measured + n <= kMeasureBytes)) {
      measured += n;
      ++fit;
    }
  }
  const uint64_t mean = total / ids.size();
  ids.resize(fit);
  std::sort(ids.begin(), ids.end());  // RecordSource::read takes them ascending

  if (mean <= kAutoDictMeanBytes && c.population >= 10) {
    TrainOptions t = train_options(DictTier::kSmall);
    t.seed = 0;
    // What the sample will train on: 7 in 8 records (1 in 8 is held out), all of them
    // when the source is smaller than the budget.
    const uint64_t sample =
        std::min<uint64_t>(t.sample_bytes, mean * std::min<uint64_t>(c.population, t.max_samples)) * 7 / 8;
    t.dict_bytes = std::min(t.dict_bytes, sample / 10);
    if (t.dict_bytes >= kMinDictBytes) {
      TrainReport report;
      auto dict = train_dictionary(source, t, &report, ctx);
      if (dict.is_ok()) {
        c.trained = true;
        c.sampled = report.samples;
        c.sizes = {report.heldout_samples, report.heldout_bytes, report.heldout_zstd, report.heldout_dict};
        c.codec = pick_codec(c.sizes);
        if (c.codec == Codec::kZstdDict) c.dictionary = std::move(dict).value();
        return c;
      }
      c.note = "no dictionary: " + dict.status().message();
    } else {
      c.note = "no dictionary: the records are too few to train one";
    }
  }
  ZREC_RETURN_IF_ERROR(measure_zstd(source, ids, c.sizes));
  c.sampled = c.sizes.records;
  c.codec = pick_codec(c.sizes);
  return c;
}

std::unique_ptr<RecordSource> window_record_source(const Schema& schema, std::span<const RecordRef> records) {
  return std::make_unique<WindowSource>(schema, records);
}

std::string describe_choice(const CodecChoice& c) {
  auto ratio = [&](uint64_t n) {
    if (n == 0) return std::string("-");
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", static_cast<double>(c.sizes.raw) / static_cast<double>(n));
    return std::string(text);
  };
  std::string line = std::to_string(c.sampled) + " of " + std::to_string(c.population) + " records sampled";
  if (c.trained) line += ", " + std::to_string(c.sizes.records) + " held out";
  line += " and measured (" + std::to_string(c.sizes.raw) + " bytes); compression ratio zstd " + ratio(c.sizes.zstd);
  if (c.trained) line += ", zstd_dict " + ratio(c.sizes.dict);
  return line;
}

}  // namespace zrec
