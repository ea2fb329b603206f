// Dictionary training (include/zrec/dict.h): deterministic sampling from a seeded
// SplitMix64 stream (not std:: distributions, whose output differs between standard
// libraries), then zstd's fastCover builder over a fixed parameter grid, each
// candidate scored on held-out samples, on all lanes.
#include "zrec/dict.h"

#define ZDICT_STATIC_LINKING_ONLY  // ZDICT_trainFromBuffer_fastCover and its parameters
#include <zdict.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "zrec/store.h"

#include "format/layout.h"
#include "store/sample_indices.h"
#include "zrec_support/splitmix64.h"

namespace zrec {

namespace {

// The tiers, chosen from the measurements in docs/compression.md.
constexpr DictTierPreset kTiers[] = {
    {DictTier::kSmall, "small", uint64_t{32} << 10, uint64_t{4} << 20, 20000,
     "32 KiB dictionary, 4 MiB of samples, one fastCover candidate (fastest)"},
    {DictTier::kBalanced, "balanced", 112640, uint64_t{16} << 20, 100000,
     "110 KiB dictionary, 16 MiB of samples, 6 candidates (the default)"},
    {DictTier::kMax, "max", uint64_t{256} << 10, uint64_t{64} << 20, 400000,
     "256 KiB or 110 KiB dictionary, whichever scores better, 64 MiB of samples, 16 candidates (slowest)"},
};

constexpr uint64_t kMinSamples = 10;
constexpr uint64_t kBalancedDictBytes = 112640;
// Every kHoldoutEvery-th sample (in random order) scores the candidates instead of training them.
constexpr size_t kHoldoutEvery = 8;
// A dictionary that saves less than this fraction on held-out samples is flagged.
constexpr double kMinUsefulGain = 0.02;
// Candidates are finalized and compared at this (fast) level; see train_dictionary.
constexpr int kSearchLevel = 3;

struct Candidate {
  unsigned k, d;
  uint64_t dict_bytes;
};

// The fastCover parameter grid of a search effort; k never exceeds the dictionary.
// The widest search also tries the balanced tier's size: on the data measured for
// docs/compression.md a larger dictionary was not always better, so the held-out score
// decides, and the max tier's grid covers the balanced tier's.
std::vector<Candidate> candidate_grid(int search, uint64_t dict_bytes) {
  std::vector<Candidate> grid;
  if (search <= 0) {
    grid.push_back({200, 8, dict_bytes});
  } else if (search == 1) {
    for (unsigned d : {8u, 6u})
      for (unsigned k : {50u, 200u, 1000u}) grid.push_back({k, d, dict_bytes});
  } else {
    for (uint64_t size : {dict_bytes, std::min<uint64_t>(dict_bytes, kBalancedDictBytes)})
      for (unsigned d : {8u, 6u})
        for (unsigned k : {50u, 200u, 1000u, 2000u}) grid.push_back({k, d, size});
  }
  std::erase_if(grid, [&](const Candidate& c) { return c.k > c.dict_bytes; });
  if (grid.empty()) grid.push_back({static_cast<unsigned>(std::max<uint64_t>(8, dict_bytes)), 8, dict_bytes});
  return grid;
}

// Samples laid out as ZDICT wants them: concatenated, with their sizes.
struct SampleSet {
  std::vector<uint8_t> bytes;
  std::vector<size_t> sizes;
};

std::string zdict_error(size_t code) { return ZDICT_getErrorName(code); }

// Compressed size of every sample of `set`, one frame each.
Result<uint64_t> compressed_total(const SampleSet& set, int level, const ZSTD_CDict* cdict) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (cctx == nullptr) return io_error("cannot allocate a zstd compression context");
  std::vector<uint8_t> out;
  uint64_t total = 0, pos = 0;
  Status status;
  for (size_t n : set.sizes) {
    out.resize(ZSTD_compressBound(n));
    const size_t r = cdict != nullptr
                         ? ZSTD_compress_usingCDict(cctx, out.data(), out.size(), set.bytes.data() + pos, n, cdict)
                         : ZSTD_compressCCtx(cctx, out.data(), out.size(), set.bytes.data() + pos, n, level);
    if (ZSTD_isError(r)) {
      status = io_error(std::string("zstd compression failed: ") + ZSTD_getErrorName(r));
      break;
    }
    total += r;
    pos += n;
  }
  ZSTD_freeCCtx(cctx);
  if (!status.is_ok()) return status;
  return total;
}

// Compressed size of `set` against a dictionary at `level`.
Result<uint64_t> compressed_with(const SampleSet& set, const std::vector<uint8_t>& dict, int level) {
  ZSTD_CDict* cdict = ZSTD_createCDict(dict.data(), dict.size(), level);
  if (cdict == nullptr) return invalid_argument("zstd cannot load the dictionary it trained");
  auto total = compressed_total(set, level, cdict);
  ZSTD_freeCDict(cdict);
  return total;
}

Status internal_error(const std::string& m) { return Status(StatusCode::kIoError, m); }

class StoreSource : public RecordSource {
 public:
  explicit StoreSource(std::vector<Store*> stores) : stores_(std::move(stores)) {
    starts_.push_back(0);
    for (Store* s : stores_) starts_.push_back(starts_.back() + s->length());
  }
  uint64_t count() const override { return starts_.back(); }

  Status lengths(std::span<const uint64_t> ids, uint64_t* out) override {
    // By runs of ids of one store, through its id-list read_locs (its table cache; a
    // remote store's pieces fetched on its lanes).
    std::vector<uint64_t> local;
    std::vector<RecordLoc> locs;
    for (size_t begin = 0; begin < ids.size();) {
      const size_t s = store_of(ids[begin]);
      size_t end = begin;
      local.clear();
      while (end < ids.size() && store_of(ids[end]) == s) local.push_back(ids[end++] - starts_[s]);
      locs.resize(local.size());
      ZREC_RETURN_IF_ERROR(stores_[s]->read_locs(local, locs.data()));
      for (size_t k = 0; k < local.size(); ++k) out[begin + k] = locs[k].logic_length;
      begin = end;
    }
    return Status::ok();
  }

  Status read(std::span<const uint64_t> ids, uint64_t max_bytes,
              const std::function<Status(size_t, const uint8_t*, size_t)>& fn) override {
    std::vector<uint64_t> local;
    for (size_t begin = 0; begin < ids.size();) {
      const size_t s = store_of(ids[begin]);
      size_t end = begin;
      local.clear();
      while (end < ids.size() && ids[end] < starts_[s + 1]) local.push_back(ids[end++] - starts_[s]);
      ZREC_RETURN_IF_ERROR(stores_[s]->scan(local, kDefaultWindowBytes, [&](const Window& w) -> Status {
        for (size_t k = 0; k < w.ids.size(); ++k) {
          const uint64_t n = std::min(w.offsets[k + 1] - w.offsets[k], max_bytes);
          ZREC_RETURN_IF_ERROR(fn(begin + w.first_index + k, w.data + w.offsets[k], n));
        }
        return Status::ok();
      }));
      begin = end;
    }
    return Status::ok();
  }

 private:
  size_t store_of(uint64_t id) const {
    return static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), id) - starts_.begin()) - 1;
  }
  std::vector<Store*> stores_;
  std::vector<uint64_t> starts_;  // starts_[s] = first global id of stores_[s]
};

}  // namespace

const DictTierPreset& dict_tier_preset(DictTier tier) {
  for (const auto& t : kTiers)
    if (t.tier == tier) return t;
  return kTiers[1];
}

std::optional<DictTier> parse_dict_tier(std::string_view name) {
  for (const auto& t : kTiers)
    if (name == t.name) return t.tier;
  return std::nullopt;
}

TrainOptions train_options(DictTier tier) {
  const DictTierPreset& p = dict_tier_preset(tier);
  TrainOptions o;
  o.dict_bytes = p.dict_bytes;
  o.sample_bytes = p.sample_bytes;
  o.max_samples = p.max_samples;
  o.search = tier == DictTier::kSmall ? 0 : tier == DictTier::kBalanced ? 1 : 2;
  return o;
}

std::unique_ptr<RecordSource> store_record_source(std::vector<Store*> stores) {
  return std::make_unique<StoreSource>(std::move(stores));
}

std::vector<uint64_t> store::sample_indices(uint64_t population, uint64_t count, uint64_t seed) {
  count = std::min(count, population);
  SplitMix64 rng(seed);
  std::vector<uint64_t> chosen;
  chosen.reserve(count);
  if (count == population) {
    for (uint64_t i = 0; i < population; ++i) chosen.push_back(i);
  } else {
    // Floyd's algorithm: `count` distinct values with O(count) memory, whatever the
    // population. The vector keeps insertion order; the set only answers membership.
    std::unordered_set<uint64_t> seen;
    seen.reserve(count * 2);
    for (uint64_t j = population - count; j < population; ++j) {
      const uint64_t t = rng.below(j + 1);
      const uint64_t pick = seen.count(t) ? j : t;
      seen.insert(pick);
      chosen.push_back(pick);
    }
  }
  // Fisher-Yates: a uniformly random order, so any prefix is a uniform sample too.
  for (uint64_t i = chosen.size(); i > 1; --i) std::swap(chosen[i - 1], chosen[rng.below(i)]);
  return chosen;
}

namespace {

// Step 1: the candidates in random order, then the prefix whose sizes fit the sample
// budget (each capped at max_sample_bytes); *budget_used: the bytes they will take.
Result<std::vector<uint64_t>> pick_samples(RecordSource& source, const TrainOptions& options, uint64_t population,
                                           uint64_t* budget_used) {
  const uint64_t max_samples = std::max<uint64_t>(options.max_samples, kMinSamples);
  std::vector<uint64_t> order = store::sample_indices(population, max_samples, options.seed);
  std::vector<uint64_t> lengths(order.size());
  ZREC_RETURN_IF_ERROR(source.lengths(order, lengths.data()));
  const uint64_t cap = std::max<uint64_t>(1, options.max_sample_bytes);
  *budget_used = 0;
  size_t taken = 0;
  for (; taken < order.size(); ++taken) {
    const uint64_t n = std::min(lengths[taken], cap);
    if (taken >= kMinSamples && *budget_used + n > options.sample_bytes) break;
    *budget_used += n;
  }
  order.resize(taken);
  return order;
}

// Step 2: reads the picked records in ID order; every kHoldoutEvery-th (in random
// order) is held out. Fills the report's sample counts.
Status read_samples(RecordSource& source, const std::vector<uint64_t>& order, const TrainOptions& options,
                    uint64_t budget_used, SampleSet& train, SampleSet& heldout, TrainReport* report) {
  const size_t taken = order.size();
  std::vector<std::pair<uint64_t, bool>> picks(taken);  // (id, held out)
  for (size_t i = 0; i < taken; ++i) picks[i] = {order[i], i % kHoldoutEvery == kHoldoutEvery - 1};
  std::sort(picks.begin(), picks.end());
  std::vector<uint64_t> ids(taken);
  for (size_t i = 0; i < taken; ++i) ids[i] = picks[i].first;
  train.bytes.reserve(budget_used);
  const uint64_t cap = std::max<uint64_t>(1, options.max_sample_bytes);
  ZREC_RETURN_IF_ERROR(source.read(ids, cap, [&](size_t k, const uint8_t* bytes, size_t n) {
    SampleSet& set = picks[k].second ? heldout : train;
    set.bytes.insert(set.bytes.end(), bytes, bytes + n);
    set.sizes.push_back(n);
    return Status::ok();
  }));
  report->samples = taken;
  report->sample_bytes = train.bytes.size() + heldout.bytes.size();
  report->heldout_samples = heldout.sizes.size();
  report->heldout_bytes = heldout.bytes.size();
  return Status::ok();
}

struct Outcome {
  Status status;
  std::vector<uint8_t> dict;
  uint64_t compressed = 0;
};

struct Baselines {
  uint64_t zstd = 0;    // held-out bytes with zstd at its default level
  uint64_t nodict = 0;  // ... at the target level, without a dictionary
};

// Step 3: every candidate of the grid, trained and scored at the search level, and the
// two baselines, on all lanes. Results are kept per index, so the choice does not
// depend on which lane finished first.
Status search_candidates(const std::vector<Candidate>& grid, const SampleSet& train, const SampleSet& heldout,
                         int level, Lanes& pool, std::vector<Outcome>& outcomes, Baselines& baselines) {
  outcomes.assign(grid.size(), Outcome{});
  return pool.run(grid.size() + 2, [&](size_t, size_t task) -> Status {
    if (task == grid.size() || task == grid.size() + 1) {
      const int baseline_level = task == grid.size() ? format::kZstdLevel : level;
      auto r = compressed_total(heldout, baseline_level, nullptr);
      if (!r.is_ok()) return r.status();
      (task == grid.size() ? baselines.zstd : baselines.nodict) = r.value();
      return Status::ok();
    }
    Outcome& out = outcomes[task];
    ZDICT_fastCover_params_t p;
    std::memset(&p, 0, sizeof p);
    p.k = grid[task].k;
    p.d = grid[task].d;
    p.f = 20;
    p.steps = 0;
    p.nbThreads = 1;
    p.splitPoint = 1.0;
    p.accel = 1;
    p.shrinkDict = 0;
    // Performance note: which segments fastCover picks does not depend on the level;
    // only the entropy tables do. Candidates are finalized and scored at a fast level,
    // and only the winner is finalized at the target level (below).
    p.zParams.compressionLevel = kSearchLevel;
    p.zParams.notificationLevel = 0;
    p.zParams.dictID = 0;  // derived from the content (deterministic)
    out.dict.resize(grid[task].dict_bytes);
    const size_t r = ZDICT_trainFromBuffer_fastCover(out.dict.data(), out.dict.size(), train.bytes.data(),
                                                     train.sizes.data(), static_cast<unsigned>(train.sizes.size()), p);
    if (ZDICT_isError(r)) {
      out.status = invalid_argument("zstd's dictionary builder rejected the samples (" + zdict_error(r) +
                                    ", k=" + std::to_string(p.k) + " d=" + std::to_string(p.d) + ")");
      return Status::ok();  // another candidate may still succeed
    }
    out.dict.resize(r);
    auto total = compressed_with(heldout, out.dict, kSearchLevel);
    if (!total.is_ok()) {
      out.status = total.status();
      return Status::ok();
    }
    out.compressed = total.value();
    return Status::ok();
  });
}

// Step 4: the finalists, the best candidate (at the search level) of each dictionary
// size, in grid order. Each is finalized for the target level and scored there, since
// the fast search level can misjudge between sizes; the best is returned, its index in
// *best and its held-out bytes in report->heldout_dict.
Result<std::vector<uint8_t>> pick_finalist(const std::vector<Candidate>& grid, std::vector<Outcome>& outcomes,
                                           const SampleSet& train, const SampleSet& heldout, int level, size_t* best,
                                           TrainReport* report) {
  std::vector<size_t> finalists;
  for (size_t i = 0; i < grid.size(); ++i) {
    if (!outcomes[i].status.is_ok()) continue;
    auto same = std::find_if(finalists.begin(), finalists.end(),
                             [&](size_t f) { return grid[f].dict_bytes == grid[i].dict_bytes; });
    if (same == finalists.end()) finalists.push_back(i);
    else if (outcomes[i].compressed < outcomes[*same].compressed) *same = i;
  }
  if (finalists.empty())
    return Status(outcomes[0].status.code(), outcomes[0].status.message() +
                                                 "; the records may be too few, too small or too uniform " +
                                                 "for a dictionary (" + std::to_string(report->samples) + " samples, " +
                                                 std::to_string(report->sample_bytes) + " bytes)");

  *best = grid.size();
  std::vector<uint8_t> dict;
  for (size_t f : finalists) {
    // The candidate's content, finalized for the target level: its entropy tables come
    // from the training samples compressed at that level.
    std::vector<uint8_t> candidate = std::move(outcomes[f].dict);
    if (level != kSearchLevel) {
      const size_t header = ZDICT_getDictHeaderSize(candidate.data(), candidate.size());
      if (ZDICT_isError(header)) return internal_error("cannot read the trained dictionary's header");
      std::vector<uint8_t> content(candidate.begin() + static_cast<ptrdiff_t>(header), candidate.end());
      ZDICT_params_t zp;
      std::memset(&zp, 0, sizeof zp);
      zp.compressionLevel = level;
      candidate.assign(grid[f].dict_bytes, 0);
      const size_t r = ZDICT_finalizeDictionary(candidate.data(), candidate.size(), content.data(), content.size(),
                                                train.bytes.data(), train.sizes.data(),
                                                static_cast<unsigned>(train.sizes.size()), zp);
      if (ZDICT_isError(r))
        return invalid_argument("zstd's dictionary builder could not finalize the dictionary for level " +
                                std::to_string(level) + " (" + zdict_error(r) + ")");
      candidate.resize(r);
    }
    ZREC_ASSIGN_OR_RETURN(const uint64_t compressed, compressed_with(heldout, candidate, level));
    if (*best == grid.size() || compressed < report->heldout_dict) {
      *best = f;
      report->heldout_dict = compressed;
      dict = std::move(candidate);
    }
  }
  return dict;
}

}  // namespace

Result<std::vector<uint8_t>> train_dictionary(RecordSource& source, const TrainOptions& options, TrainReport* report,
                                              const Context& ctx) {
  TrainReport local;
  if (report == nullptr) report = &local;
  *report = TrainReport{};
  const int level = options.level != 0 ? options.level : format::kZstdDictLevel;
  if (options.dict_bytes < 256)
    return invalid_argument("a dictionary of " + std::to_string(options.dict_bytes) +
                            " bytes is too small to be useful (use at least 256)");
  if (options.dict_bytes > format::kMaxRecordBytes) return invalid_argument("the dictionary size must be below 2 GiB");

  const uint64_t population = source.count();
  report->population = population;
  if (population < kMinSamples)
    return invalid_argument("the source holds " + std::to_string(population) +
                            " records; training a dictionary needs at least " + std::to_string(kMinSamples) +
                            " (and thousands for a useful one)");

  // 1. Candidates in random order, their sizes, then the prefix that fits the budget.
  uint64_t budget_used = 0;
  ZREC_ASSIGN_OR_RETURN(const std::vector<uint64_t> order, pick_samples(source, options, population, &budget_used));

  // 2. Read them in ID order; every kHoldoutEvery-th (in random order) is held out.
  SampleSet train, heldout;
  ZREC_RETURN_IF_ERROR(read_samples(source, order, options, budget_used, train, heldout, report));
  if (train.bytes.size() < options.dict_bytes)
    return invalid_argument("the sampled records hold " + std::to_string(report->sample_bytes) +
                            " bytes, too few for a " + std::to_string(options.dict_bytes) +
                            "-byte dictionary (one of at most about " +
                            std::to_string(std::max<uint64_t>(256, report->sample_bytes / 10)) + " bytes is useful)");
  if (report->sample_bytes < 10 * options.dict_bytes)
    report->warnings.push_back("the samples (" + std::to_string(report->sample_bytes) +
                               " bytes) are less than 10x the dictionary size (" + std::to_string(options.dict_bytes) +
                               "); the dictionary may overfit: a smaller dictionary or more records help");

  // 3. Candidates and the two baselines, on all lanes.
  const std::vector<Candidate> grid = candidate_grid(options.search, options.dict_bytes);
  report->candidates = static_cast<unsigned>(grid.size());
  std::vector<Outcome> outcomes;
  Baselines baselines;
  const std::shared_ptr<Lanes> lanes = ctx.lanes ? ctx.lanes : std::make_shared<Lanes>(write_lane_budget());
  ZREC_RETURN_IF_ERROR(search_candidates(grid, train, heldout, level, *lanes, outcomes, baselines));

  // 4. The finalists, each finalized and scored at the target level.
  size_t best = grid.size();
  ZREC_ASSIGN_OR_RETURN(std::vector<uint8_t> dict, pick_finalist(grid, outcomes, train, heldout, level, &best, report));

  report->k = grid[best].k;
  report->d = grid[best].d;
  report->heldout_zstd = baselines.zstd;
  report->heldout_nodict = baselines.nodict;
  report->dict_id = ZDICT_getDictID(dict.data(), dict.size());
  if (baselines.nodict > 0 &&
      static_cast<double>(report->heldout_dict) > (1.0 - kMinUsefulGain) * static_cast<double>(baselines.nodict)) {
    const double gain = 100.0 * (1.0 - static_cast<double>(report->heldout_dict) / baselines.nodict);
    char text[64];
    std::snprintf(text, sizeof text, "%.1f%%", gain);
    report->warnings.push_back(std::string("the dictionary saves only ") + text +
                               " on held-out records compared with zstd at the same level without it; "
                               "codec zstd is likely as good for this data");
  }
  return dict;
}

}  // namespace zrec
