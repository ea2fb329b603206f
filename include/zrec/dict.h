// Training zstd dictionaries for zstd_dict stores (on its own, or for a copy into a
// zstd_dict store given no dictionary). The trainer samples, deterministically
// from a seed, the exact logical records a store holds or would hold (Ragged: with the
// shape prefix), and runs zstd's fastCover builder (ZDICT) over a small fixed grid of
// parameters, keeping the candidate that compresses held-out samples best.
// Same records + same options (seed included) = the same dictionary bytes, whatever
// the thread count: every step is deterministic and the grid search breaks ties by
// grid order.
//
// Example:
//   ZREC_ASSIGN_OR_RETURN(auto store, zrec::Store::open("tokens/"));
//   auto source = zrec::store_record_source({store.get()});
//   zrec::TrainReport report;
//   ZREC_ASSIGN_OR_RETURN(auto dict, zrec::train_dictionary(*source,
//                         zrec::train_options(zrec::DictTier::kBalanced), &report));
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/context.h"
#include "zrec/status.h"

namespace zrec {

class Store;

// Presets of dictionary size, sample budget and search effort (docs/compression.md
// lists the measurements behind them).
enum class DictTier { kSmall, kBalanced, kMax };

struct DictTierPreset {
  DictTier tier;
  const char* name;       // "small", "balanced", "max"
  uint64_t dict_bytes;    // dictionary capacity
  uint64_t sample_bytes;  // budget of sampled bytes
  uint64_t max_samples;   // records sampled at most
  const char* summary;    // one line describing the tier
};

const DictTierPreset& dict_tier_preset(DictTier tier);
std::optional<DictTier> parse_dict_tier(std::string_view name);

// A population of records to sample from: a store, several stores one after another,
// or the records .npy files would append. Indices are 0..count()-1.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  virtual uint64_t count() const = 0;
  // out[k] = logic_length of record ids[k] (ids in any order).
  virtual Status lengths(std::span<const uint64_t> ids, uint64_t* out) = 0;
  // For ascending ids, calls fn(k, bytes, n) with the first n = min(logic_length,
  // max_bytes) bytes of record ids[k], in order.
  virtual Status read(std::span<const uint64_t> ids, uint64_t max_bytes,
                      const std::function<Status(size_t k, const uint8_t* bytes, size_t n)>& fn) = 0;
};

// The records of `stores`, one store after another (as concat would append them).
// The stores must outlive the source.
std::unique_ptr<RecordSource> store_record_source(std::vector<Store*> stores);

struct TrainOptions {
  uint64_t dict_bytes = 112640;                // dictionary capacity (ZDICT's default, 110 KiB)
  uint64_t sample_bytes = uint64_t{16} << 20;  // budget of sampled bytes
  uint64_t max_samples = 100000;               // records sampled at most
  // Each sampled record contributes at most its first this-many bytes (as zstd's trainer
  // does with files): a dictionary helps the start of a frame; later bytes find their
  // matches in the record itself.
  uint64_t max_sample_bytes = uint64_t{128} << 10;
  uint64_t seed = 0;  // sample selection
  int level = 0;      // level the entropy tables are tuned for; 0: 15
  int search = 1;     // parameter grid: 0 one candidate, 1 six, 2 sixteen
                      // (2 also tries the balanced tier's 110 KiB)
};

// The options of a tier (search effort included).
TrainOptions train_options(DictTier tier);

struct TrainReport {
  uint64_t population = 0;    // records in the source
  uint64_t samples = 0;       // records sampled (training + held out)
  uint64_t sample_bytes = 0;  // their bytes (after the per-record cap)
  uint64_t heldout_samples = 0;
  uint64_t heldout_bytes = 0;
  // Held-out samples compressed one frame each: codec zstd (level 3), zstd at the
  // dictionary's level without it, and with the dictionary (what zstd_dict stores).
  uint64_t heldout_zstd = 0;
  uint64_t heldout_nodict = 0;
  uint64_t heldout_dict = 0;
  uint32_t dict_id = 0;
  unsigned k = 0, d = 0;  // fastCover parameters of the chosen candidate
  unsigned candidates = 0;
  std::vector<std::string> warnings;  // e.g. too few samples for the size, no gain
};

// Trains a dictionary of at most options.dict_bytes bytes. Errors (kInvalidArgument,
// with the reason and what to change): fewer than 10 records to sample, samples
// totalling less than the dictionary size, or zstd's trainer rejecting the samples.
// The report is filled as far as training got: after the samples were read (samples > 0)
// it counts them, so a caller can tell "too few sample bytes" (sample_bytes less
// heldout_bytes is under dict_bytes) from the other errors and name its own remedy.
// Warnings (in report->warnings): samples under 10x the dictionary size; a dictionary
// that saves under 2% on held-out samples. Candidates run on ctx.lanes (null:
// write_lane_budget() lanes of its own).
Result<std::vector<uint8_t>> train_dictionary(RecordSource& source, const TrainOptions& options, TrainReport* report,
                                              const Context& ctx = {});

// Writes a trained dictionary to the file `path` (the file a dictionary is kept in
// before a store is created with it): into a temporary next to it ("NAME.tmp-XXXXXX", locked, synced)
// that is then renamed into place, so `path` is either untouched or whole. Temporaries a
// killed writer left there are removed first, only when they provably are zrec's; one
// left in place is said to ctx.warn (zrec/context.h). Errors: kIoError / kNotFound naming
// the path.
Status save_dictionary_file(const std::string& path, std::span<const uint8_t> dictionary, const Context& ctx = {});

}  // namespace zrec
