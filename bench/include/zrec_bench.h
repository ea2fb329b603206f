// zrec's benchmark: deterministic generators for the four workloads the loaderx
// documentation measures, and the measurement loops behind `zrec bench`. Every zrec
// figure comes with baselines measured in the same run (plain parallel preads of the
// same bytes; the same lanes compressing/decompressing the same records in memory), so
// a noisy machine still yields meaningful ratios. Nothing here prints: results are
// structs; the Context's Control (zrec/context.h) stops a run and hears what it is
// doing, as Progress::phase ("vision: writing the zstd_dict store"; no counts).
//
// Example:
//   auto corpus = zrec::bench::generate(zrec::bench::Workload::kVision, 500, 1, 2);
//   zrec::bench::RunOptions o{.codecs = {zrec::Codec::kRaw}, .dir = "/tmp"};
//   auto result = zrec::bench::run_workload(o, corpus, ctx);
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/context.h"
#include "zrec/format.h"
#include "zrec/lanes.h"
#include "zrec/schema.h"
#include "zrec/status.h"
#include "zrec/store_writer.h"

namespace zrec::bench {

// The four store workloads of the loaderx benchmark (its "Store" tables).
enum class Workload {
  kVision,     // Dense |u1 (3,224,224): 147 KiB image-like records
  kVisionVar,  // Ragged |u1 ndim 3: (3,H,W), H and W uniform in 176..304 (mean 240)
  kTokens,     // Dense <i4 (512,): 2 KiB records of Zipf-distributed token ids
  kTokensVar,  // Ragged <i4 ndim 1: log-normal lengths (median 90, long tail, 1..8192)
};
inline constexpr Workload kAllWorkloads[] = {Workload::kVision, Workload::kVisionVar, Workload::kTokens,
                                             Workload::kTokensVar};

// "vision", "vision-var", "tokens", "tokens-var".
const char* to_string(Workload w);
std::optional<Workload> parse_workload(std::string_view name);
// One line: what the records are.
const char* describe(Workload w);

struct WorkloadDefaults {
  uint64_t records;       // the corpus size loaderx measures (2500 images, 200000 token records)
  uint64_t batch;         // records per gather batch (256, as upstream)
  uint64_t record_bytes;  // mean logical record size, to turn --bytes into a record count
};
WorkloadDefaults defaults(Workload w);

// A generated corpus: records() records whose payloads lie back to back in `payload`.
// Record k is payload[offsets[k] .. offsets[k+1]); for Ragged its dims are
// dims[k*ndim .. (k+1)*ndim) (the store adds them as the shape prefix).
struct Corpus {
  Workload workload = Workload::kVision;
  uint64_t seed = 0;
  Schema schema;
  std::vector<uint8_t> payload;
  std::vector<uint64_t> offsets;  // records() + 1 entries
  std::vector<uint64_t> dims;     // Ragged only

  uint64_t records() const { return offsets.empty() ? 0 : offsets.size() - 1; }
  // Bytes of the logical records as stored: payloads plus Ragged shape prefixes.
  uint64_t logical_bytes() const;
  uint64_t logic_length(uint64_t k) const;
  // RecordRefs of records [first, first + count), for StoreWriter::append.
  std::vector<RecordRef> refs(uint64_t first, uint64_t count) const;
  // Writes record k's logical record (shape prefix + payload) to out (logic_length(k) bytes).
  void logical_record(uint64_t k, uint8_t* out) const;
};

// Generates `records` records of workload w. Deterministic: record k depends only on
// (w, seed, k), never on `records` or `lanes` (the lanes only generate in parallel).
// The generators (bench/image_gen.cc, bench/token_gen.cc) are documented in
// man/zrec-bench.1 together with the compression ratios they give.
Corpus generate(Workload w, uint64_t records, uint64_t seed, Lanes& lanes);

// Timing of one measurement: totals plus per-batch (or per-call) latency percentiles.
struct Throughput {
  uint64_t records = 0;
  uint64_t bytes = 0;  // logical bytes delivered (or consumed, for writes)
  uint64_t batches = 0;
  double seconds = 0;  // sum of timed intervals
  double p50_ms = 0, p95_ms = 0, p99_ms = 0;
  bool measured = false;  // false: not run (e.g. no baseline for this codec)

  double bytes_per_s() const { return seconds > 0 ? double(bytes) / seconds : 0; }
  double records_per_s() const { return seconds > 0 ? double(records) / seconds : 0; }
};

struct RunOptions {
  std::vector<Codec> codecs = {Codec::kRaw, Codec::kZstd, Codec::kZstdDict};
  // Also a store created with `--codec auto` (zrec/codec_choice.h), reported after the
  // codecs: its first window chooses (the choice is inside its write time).
  bool codec_auto = false;
  uint64_t batch = 0;  // records per gather; 0: the workload's default (256)
  // The executors gathers and builds run on; null: pools of read_lane_budget() /
  // write_lane_budget() lanes (zrec/lanes.h). Two, where a Context has one: the
  // benchmark reports reads and writes each under its own budget.
  std::shared_ptr<Lanes> read_lanes = nullptr, write_lanes = nullptr;
  std::string dir;           // parent of the temporary stores ("" : $TMPDIR or /tmp)
  bool keep = false;         // keep the stores (their paths are in the result)
  bool cold = false;         // evict the store's files from the page cache before each batch
  bool sync = false;         // fsync when the writer publishes (counted in the write time)
  double seconds = 2.0;      // minimum timed gather per measurement (>= 0.01)
  uint32_t rounds = 4;       // measurements interleave in this many rounds (noise control)
  uint32_t data_shards = 4;  // of the stores built
  uint64_t seed = 1;         // of the batch id streams
};

// One codec's row: what the loaderx tables report, plus same-run baselines.
struct CodecResult {
  Codec codec = Codec::kRaw;
  bool automatic = false;      // the `--codec auto` store; `codec` is what it chose
  std::string store_path;      // with RunOptions::keep; empty otherwise (the store is gone)
  Throughput write;            // create + append (windows of 64 MiB) + close
  Throughput gather;           // random IID batches through Store::gather
  Throughput mem_encode;       // the same lanes encoding the same records in memory
  Throughput mem_decode;       // the same lanes decoding the same stored frames from memory
  uint64_t disk_bytes = 0;     // every file of the store
  uint64_t payload_bytes = 0;  // sum of the shard tails
  uint64_t dict_bytes = 0;
};

// "auto" for the `--codec auto` store, the codec's name otherwise.
std::string codec_label(const CodecResult& c);

struct WorkloadResult {
  Workload workload = Workload::kVision;
  Schema schema;
  uint64_t records = 0, logical_bytes = 0, batch = 0;
  size_t read_lanes = 0, write_lanes = 0;
  bool cold = false;
  // The physical limit of a gather here: the same lanes pread the same bytes (the raw
  // store's records, the same batches) into one buffer, with nothing else.
  Throughput pread_limit;
  std::vector<CodecResult> codecs;
};

// Builds one store per codec from `corpus` (always a raw one: it is the pread-limit
// source), measures writes, then gathers and baselines interleaved in rounds.
// ctx.control: cancel stops at the next batch or phase with kCancelled (the temporary
// stores are removed all the same); progress hears each phase as it starts, named in
// Progress::phase. The lanes are the options' (read_lanes, write_lanes), not ctx's.
Result<WorkloadResult> run_workload(const RunOptions& options, const Corpus& corpus, const Context& ctx = {});

// `zrec bench STORE`: random IID gathers on an existing store, beside the pread limit
// of the same stored bytes and (when the stored payload fits in memory_limit bytes) the
// same lanes decoding the same frames from memory.
struct StoreBenchOptions {
  uint64_t batch = 256;
  bool cold = false;
  double seconds = 2.0;
  uint32_t rounds = 4;
  uint64_t seed = 1;
  uint64_t memory_limit = uint64_t{2} << 30;
};
struct StoreBenchResult {
  std::string path;
  Schema schema;
  Codec codec = Codec::kRaw;
  uint64_t records = 0, logical_bytes = 0, payload_bytes = 0, disk_bytes = 0, batch = 0;
  size_t lanes = 0;
  bool cold = false;
  Throughput gather, pread_limit, mem_decode;
};
// The store is opened in `ctx`: its lanes (null: one of read_lane_budget() lanes), its
// lock wait, and its Control, whose cancel stops the run before the next batch with
// kCancelled (a --wait for the lock too) and whose progress hears each phase as it starts.
Result<StoreBenchResult> bench_store(const std::string& path, const StoreBenchOptions& options,
                                     const Context& ctx = {});

}  // namespace zrec::bench
