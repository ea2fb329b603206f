// Pieces of the benchmark shared by the files of bench/: the deterministic RNG,
// the generators, the timed-loop driver and the measurements it interleaves.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zrec/format.h"
#include "zrec/store.h"

#include "codec/record_codec.h"
#include "zrec_bench.h"
#include "zrec_support/file.h"
#include "zrec_support/splitmix64.h"

namespace zrec::bench {

// The generator of the corpora and id streams: the library's SplitMix64.
using Rng = SplitMix64;

// A seed for stream `stream` of record `k`: records are generated independently.
inline uint64_t derive_seed(uint64_t seed, uint64_t stream, uint64_t k) {
  Rng r(seed ^ (stream * 0xD1B54A32D192ED03ull));
  return Rng(r.next() ^ (k * 0x9E3779B97F4A7C15ull)).next();
}

using Clock = std::chrono::steady_clock;
inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// --- generators (image_gen.cc, token_gen.cc) ---
// One 3 x h x w |u1 image (C-order, channel planes) for record k.
void generate_image(uint64_t seed, uint64_t k, uint32_t h, uint32_t w, uint8_t* out);
// Zipf-distributed token ids (vocabulary 32000, s = 1.1) for record k.
void generate_tokens(uint64_t seed, uint64_t k, size_t count, int32_t* out);
// Variable lengths: (h, w) of a vision-var record, the token count of a tokens-var record.
void image_size(uint64_t seed, uint64_t k, uint32_t* h, uint32_t* w);
uint64_t token_count(uint64_t seed, uint64_t k);

// --- latency statistics (latency.cc) ---
// Fills p50/p95/p99 (milliseconds) from per-batch seconds (sorted in place).
void fill_percentiles(std::vector<double>& batch_seconds, Throughput& t);

// --- page cache (page_cache.cc) ---
// Flushes (fdatasync) and drops the page-cache pages of every file in `dir`
// (posix_fadvise DONTNEED). Flush first: dirty pages cannot be dropped.
Status evict_directory(const std::string& dir, bool flush);

// --- the timed loop (gather_loop.cc) ---
// One kind of random gather, run batch by batch. run_batch gathers `ids` and returns
// the logical bytes it delivered; before_batch runs untimed (cache eviction).
class Measurement {
 public:
  virtual ~Measurement() = default;
  virtual Status before_batch() { return Status::ok(); }
  virtual Result<uint64_t> run_batch(std::span<const uint64_t> ids) = 0;
};

struct LoopOptions {
  uint64_t records = 0;  // ids are uniform IID in [0, records)
  uint64_t batch = 256;
  double seconds = 2.0;  // per measurement, in total
  uint32_t rounds = 4;
  uint64_t seed = 1;
  Control control = {};  // cancelled: return kCancelled before the next batch (progress: unused)
};

// Runs the measurements interleaved: in each round, each one runs batches for
// seconds/rounds (at least one batch). Every measurement sees the same id stream (its
// k-th batch holds the same ids), so they read the same bytes. Returns one Throughput each.
Result<std::vector<Throughput>> run_interleaved(std::span<Measurement* const> measurements, const LoopOptions& o);

// --- measurements (measurements.cc) ---
// Store::gather on the store at `path`, opened by the measurement with `options`.
// Dense: gather(ids) straight into the batch buffer. Ragged: read_locs(ids),
// destination offsets, gather(ids, locs) (what a loader does). `max_logic` sizes the
// reusable buffer (largest logic_length in the store). Cold: before each batch the
// store is closed, its files evicted, and reopened (untimed).
Result<std::unique_ptr<Measurement>> make_store_gather(const std::string& path, const Context& ctx, uint64_t batch,
                                                       uint64_t max_logic, bool cold);

// The same stored ranges as Store::gather reads (from a table loaded up front), read
// with plain preads by the same lanes, contiguous blocks, into one buffer.
struct StoredTable {
  std::vector<RecordLoc> locs;
  std::vector<io::File> shard_files;  // data_s.zr, opened read-only
  uint32_t shards = 1;
  uint64_t max_phys = 0, max_logic = 0, payload_bytes = 0, logical_bytes = 0;
};
Result<StoredTable> load_stored_table(const Store& store);
std::unique_ptr<Measurement> make_pread_limit(const StoredTable& table, Lanes& lanes, uint64_t batch,
                                              const std::string& evict_dir);

// The same lanes decoding the same stored frames from memory (every data file is read
// into memory first): plain ZSTD_decompressDCtx / _usingDDict (memcpy for raw).
std::unique_ptr<Measurement> make_memory_decode(const StoredTable& table, Codec codec,
                                                std::shared_ptr<codec::Dictionary> dictionary, Lanes& lanes,
                                                uint64_t batch, Status* status);

// The same lanes encoding the corpus's logical records in memory with the store's
// codec and level, records claimed one by one, for at least `seconds` (or all records).
Result<Throughput> memory_encode(const Corpus& corpus, Codec codec, std::shared_ptr<codec::Dictionary> dictionary,
                                 Lanes& lanes, double seconds);

// --- dictionary (dict_train.cc) ---
// Trains a zstd dictionary on the corpus's logical records with train_dictionary() and
// the balanced tier (zrec/dict.h), as `zrec train-dict` would, on `lanes`.
Result<std::vector<uint8_t>> train_corpus_dictionary(const Corpus& corpus, std::shared_ptr<Lanes> lanes);

}  // namespace zrec::bench
