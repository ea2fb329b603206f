// The measurements the timed loop interleaves: Store::gather itself, the pread limit
// of the same bytes, and the same lanes decoding the same frames from memory; plus the
// in-memory encode baseline of writes.
#define ZSTD_STATIC_LINKING_ONLY
#include <fcntl.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "bench_internal.h"
#include "format/layout.h"

namespace zrec::bench {

namespace {

// Gather-like block split: lanes * 4 contiguous blocks (as Store::gather does).
size_t block_size(size_t n, size_t lanes) { return std::max<size_t>(1, (n + lanes * 4 - 1) / (lanes * 4)); }

// A buffer whose pages are touched once up front, so the timed loop never faults them in.
std::vector<uint8_t> touched_buffer(uint64_t bytes) { return std::vector<uint8_t>(std::max<uint64_t>(bytes, 1), 0); }

class StoreGather final : public Measurement {
 public:
  StoreGather(std::unique_ptr<Store> store, Context ctx, uint64_t batch, uint64_t max_logic, bool cold)
      : store_(std::move(store)),
        ctx_(std::move(ctx)),
        dest_(touched_buffer(batch * max_logic)),
        locs_(batch),
        offsets_(batch + 1),
        cold_(cold) {}

  // Cold: reopen the store after dropping its pages, so nothing this reader mapped or
  // cached (RecordLoc pieces, mapped records) survives into the batch.
  Status before_batch() override {
    if (!cold_) return Status::ok();
    const std::string path = store_->path();
    store_.reset();
    ZREC_RETURN_IF_ERROR(evict_directory(path, false));
    ZREC_ASSIGN_OR_RETURN(store_, Store::open(path, {}, ctx_));
    return Status::ok();
  }

  Result<uint64_t> run_batch(std::span<const uint64_t> ids) override {
    Store& store = *store_;
    if (store.schema().is_dense()) {
      ZREC_RETURN_IF_ERROR(store.gather(ids, nullptr, dest_.data()));
      return ids.size() * (dest_.size() / locs_.size());
    }
    // Ragged, as a loader does it: sizes first, then one gather into one buffer.
    ZREC_RETURN_IF_ERROR(store.read_locs(ids, locs_.data()));
    offsets_[0] = 0;
    for (size_t k = 0; k < ids.size(); ++k) offsets_[k + 1] = offsets_[k] + locs_[k].logic_length;
    std::span<const uint64_t> offsets(offsets_.data(), ids.size() + 1);
    ZREC_RETURN_IF_ERROR(store.gather(ids, locs_.data(), dest_.data(), offsets));
    return offsets.back();
  }

 private:
  std::unique_ptr<Store> store_;
  Context ctx_;
  std::vector<uint8_t> dest_;
  std::vector<RecordLoc> locs_;
  std::vector<uint64_t> offsets_;
  bool cold_;
};

class PreadLimit final : public Measurement {
 public:
  PreadLimit(const StoredTable& t, Lanes& lanes, uint64_t batch, std::string evict_dir)
      : t_(t),
        pool_(lanes),
        dest_(touched_buffer(batch * t.max_phys)),
        offsets_(batch + 1),
        evict_dir_(std::move(evict_dir)) {}

  Status before_batch() override { return evict_dir_.empty() ? Status::ok() : evict_directory(evict_dir_, false); }

  Result<uint64_t> run_batch(std::span<const uint64_t> ids) override {
    offsets_[0] = 0;
    for (size_t k = 0; k < ids.size(); ++k) offsets_[k + 1] = offsets_[k] + t_.locs[ids[k]].phys_length;
    const size_t n = ids.size(), block = block_size(n, pool_.count());
    ZREC_RETURN_IF_ERROR(pool_.run((n + block - 1) / block, [&](size_t, size_t b) -> Status {
      for (size_t k = b * block; k < std::min(n, (b + 1) * block); ++k) {
        const RecordLoc& loc = t_.locs[ids[k]];
        ZREC_RETURN_IF_ERROR(
            t_.shard_files[ids[k] % t_.shards].pread_exact(dest_.data() + offsets_[k], loc.phys_length, loc.offset));
      }
      return Status::ok();
    }));
    return offsets_[n];
  }

 private:
  const StoredTable& t_;
  Lanes& pool_;
  std::vector<uint8_t> dest_;
  std::vector<uint64_t> offsets_;
  std::string evict_dir_;
};

class MemoryDecode final : public Measurement {
 public:
  MemoryDecode(const StoredTable& t, Codec codec, std::shared_ptr<codec::Dictionary> dictionary, Lanes& lanes,
               uint64_t batch, Status* status)
      : t_(t),
        codec_(codec),
        dictionary_(std::move(dictionary)),
        pool_(lanes),
        dest_(touched_buffer(batch * t.max_logic)),
        offsets_(batch + 1) {
    for (size_t lane = 0; lane < pool_.count(); ++lane)
      dctx_.push_back(codec == Codec::kRaw ? nullptr : ZSTD_createDCtx());
    // Every stored byte into memory, shard by shard (untimed).
    for (uint32_t s = 0; s < t.shards && status->is_ok(); ++s) {
      auto size = t.shard_files[s].size();
      if (!size.is_ok()) {
        *status = size.status();
        break;
      }
      shards_.emplace_back(size.value());
      *status = t.shard_files[s].pread_exact(shards_.back().data(), shards_.back().size(), 0);
    }
  }
  ~MemoryDecode() override {
    for (auto* d : dctx_) ZSTD_freeDCtx(d);
  }

  Result<uint64_t> run_batch(std::span<const uint64_t> ids) override {
    offsets_[0] = 0;
    for (size_t k = 0; k < ids.size(); ++k) offsets_[k + 1] = offsets_[k] + t_.locs[ids[k]].logic_length;
    const size_t n = ids.size(), block = block_size(n, pool_.count());
    ZREC_RETURN_IF_ERROR(pool_.run((n + block - 1) / block, [&](size_t lane, size_t b) -> Status {
      for (size_t k = b * block; k < std::min(n, (b + 1) * block); ++k) {
        const RecordLoc& loc = t_.locs[ids[k]];
        const uint8_t* src = shards_[ids[k] % t_.shards].data() + loc.offset;
        uint8_t* dst = dest_.data() + offsets_[k];
        if (codec_ == Codec::kRaw) {
          std::memcpy(dst, src, loc.logic_length);
          continue;
        }
        const size_t r = codec_ == Codec::kZstdDict
                             ? ZSTD_decompress_usingDDict(dctx_[lane], dst, loc.logic_length, src, loc.phys_length,
                                                          dictionary_->ddict())
                             : ZSTD_decompressDCtx(dctx_[lane], dst, loc.logic_length, src, loc.phys_length);
        if (ZSTD_isError(r)) return malformed(std::string("zstd: ") + ZSTD_getErrorName(r));
      }
      return Status::ok();
    }));
    return offsets_[n];
  }

 private:
  const StoredTable& t_;
  Codec codec_;
  std::shared_ptr<codec::Dictionary> dictionary_;
  Lanes& pool_;
  std::vector<ZSTD_DCtx*> dctx_;
  std::vector<std::vector<uint8_t>> shards_;
  std::vector<uint8_t> dest_;
  std::vector<uint64_t> offsets_;
};

}  // namespace

Result<std::unique_ptr<Measurement>> make_store_gather(const std::string& path, const Context& ctx, uint64_t batch,
                                                       uint64_t max_logic, bool cold) {
  ZREC_ASSIGN_OR_RETURN(auto store, Store::open(path, {}, ctx));
  return std::unique_ptr<Measurement>(std::make_unique<StoreGather>(std::move(store), ctx, batch, max_logic, cold));
}

std::unique_ptr<Measurement> make_pread_limit(const StoredTable& table, Lanes& lanes, uint64_t batch,
                                              const std::string& evict_dir) {
  return std::make_unique<PreadLimit>(table, lanes, batch, evict_dir);
}

std::unique_ptr<Measurement> make_memory_decode(const StoredTable& table, Codec codec,
                                                std::shared_ptr<codec::Dictionary> dictionary, Lanes& lanes,
                                                uint64_t batch, Status* status) {
  return std::make_unique<MemoryDecode>(table, codec, std::move(dictionary), lanes, batch, status);
}

Result<StoredTable> load_stored_table(const Store& store) {
  StoredTable t;
  t.shards = store.data_shards();
  t.locs.resize(store.length());
  constexpr uint64_t kChunk = 65536;
  for (uint64_t first = 0; first < store.length(); first += kChunk)
    ZREC_RETURN_IF_ERROR(store.read_locs(first, std::min(kChunk, store.length() - first), t.locs.data() + first));
  for (const RecordLoc& loc : t.locs) {
    t.max_phys = std::max<uint64_t>(t.max_phys, loc.phys_length);
    t.max_logic = std::max<uint64_t>(t.max_logic, loc.logic_length);
    t.logical_bytes += loc.logic_length;
  }
  t.payload_bytes = store.stored_bytes();
  for (uint32_t s = 0; s < t.shards; ++s) {
    ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(store.path() + "/" + format::data_file_name(s), O_RDONLY));
    t.shard_files.push_back(std::move(f));
  }
  return t;
}

Result<Throughput> memory_encode(const Corpus& corpus, Codec codec, std::shared_ptr<codec::Dictionary> dictionary,
                                 Lanes& lanes, double seconds) {
  const uint64_t n = corpus.records();
  // Ragged logical records (shape prefix + payload) are laid out contiguously first, untimed.
  std::vector<uint8_t> logical;
  std::vector<uint64_t> starts(n + 1, 0);
  if (!corpus.schema.is_dense()) {
    for (uint64_t k = 0; k < n; ++k) starts[k + 1] = starts[k] + corpus.logic_length(k);
    logical.resize(starts[n]);
    for (uint64_t k = 0; k < n; ++k) corpus.logical_record(k, logical.data() + starts[k]);
  }
  const uint8_t* base = corpus.schema.is_dense() ? corpus.payload.data() : logical.data();
  const std::vector<uint64_t>& offs = corpus.schema.is_dense() ? corpus.offsets : starts;
  uint64_t max_logic = 0;
  for (uint64_t k = 0; k < n; ++k) max_logic = std::max(max_logic, offs[k + 1] - offs[k]);

  Lanes& pool = lanes;
  std::vector<codec::Encoder> encoders;
  std::vector<std::vector<uint8_t>> out(pool.count());
  for (size_t lane = 0; lane < pool.count(); ++lane) {
    ZREC_ASSIGN_OR_RETURN(auto enc, codec::Encoder::create({codec, 0, false, dictionary}));
    out[lane] = touched_buffer(enc.bound(max_logic));
    encoders.push_back(std::move(enc));
  }
  std::atomic<uint64_t> records{0}, bytes{0};
  std::atomic<bool> stop{false};
  const auto t0 = Clock::now();
  ZREC_RETURN_IF_ERROR(pool.run(n, [&](size_t lane, size_t k) -> Status {
    if (stop.load(std::memory_order_relaxed)) return Status::ok();
    const uint64_t len = offs[k + 1] - offs[k];
    ZREC_ASSIGN_OR_RETURN(size_t stored,
                          encoders[lane].encode(base + offs[k], len, out[lane].data(), out[lane].size()));
    (void)stored;
    records.fetch_add(1, std::memory_order_relaxed);
    bytes.fetch_add(len, std::memory_order_relaxed);
    if (seconds_since(t0) >= seconds) stop.store(true, std::memory_order_relaxed);
    return Status::ok();
  }));
  Throughput t;
  t.seconds = seconds_since(t0);
  t.records = records.load();
  t.bytes = bytes.load();
  t.measured = true;
  return t;
}

}  // namespace zrec::bench
