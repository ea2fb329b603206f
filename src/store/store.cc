// The read side: open, table access, parallel gather and windowed scans (docs/format.md §8, §9).
#include "zrec/store.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <thread>

#include "zrec/remote.h"

#include "codec/record_codec.h"
#include "format/endian.h"
#include "format/record_loc.h"
#include "io/mapped_file.h"
#include "store/remote_repeats.h"
#include "store/scan_windows.h"
#include "store/store_files.h"

namespace zrec {

namespace {
// IDs whose RecordLocs one scan step loads before cutting windows: 1 MiB of table; for
// a selection of scattered IDs, 4 Mi IDs (64 MiB of RecordLocs, 16 MiB of order).
//
// Performance note: each step of a shuffle reads every table piece its IDs fall in, and
// past a few IDs per piece that is the whole table, so a step's cost is the table's
// size: 2^22 IDs a step read the table of 10^8 records 24 times, not 96 (2^20 a step).
constexpr uint64_t kLocChunk = 65536;
constexpr uint64_t kScatteredLocChunk = uint64_t{1} << 22;
// read_scattered_locs(): IDs are grouped by segments of this many table entries (1 MiB
// of table); a segment holding at least kDenseSegmentIds of them is read in one pread
// of the span they cover, the others by the 4 KiB pieces their IDs fall in.
constexpr uint64_t kLocSegmentEntries = 65536;
constexpr size_t kDenseSegmentIds = 64;

bool is_consecutive(std::span<const uint64_t> ids) {
  return ids.back() >= ids.front() && ids.back() - ids.front() == ids.size() - 1 &&
         std::adjacent_find(ids.begin(), ids.end(), [](uint64_t a, uint64_t b) { return b != a + 1; }) == ids.end();
}
// Blocks per lane in a gather: enough for dynamic balancing, few enough to stay cheap.
constexpr size_t kBlocksPerLane = 4;
// read_stored(): physically adjacent records are read together, up to this many bytes.
constexpr uint64_t kMaxStoredRun = uint64_t{8} << 20;
// A remote scan's ranges in flight at once, all lanes together (each lane holds its
// range whole before decoding it): 32 lanes ask for 2 MiB each, 8 lanes for 8 MiB.
constexpr uint64_t kRemoteBytesInFlight = uint64_t{64} << 20;
// A remote store whose meta.zr opened within this time (a connection and two requests:
// a server on the same host or LAN) is scanned with at most kNearRequests requests in
// flight: its round trips are short, and more lanes only contend for the CPUs (a whole
// store over loopback took 15% longer on 32 lanes than on 8).
constexpr uint64_t kNearServerMicros = 10'000;
constexpr size_t kNearRequests = 8;
}  // namespace

struct Store::Impl {
  store::StoreFiles files;
  std::shared_ptr<Lanes> pool;  // the executor, shared with whoever gave it
  // A remote scan's requests in flight: every lane for a distant server, a few for a
  // near one (kNearServerMicros).
  const size_t remote_depth;
  // Per-lane state, indexed by lane; each touched only by its lane during run().
  std::vector<codec::Decoder> decoders;
  std::vector<std::vector<uint8_t>> scratch;

  // Performance note: the RecordLoc table of an open store never changes (the shared
  // lock keeps writers out), so read_loc() keeps the table pieces it has read. A random
  // gather of small records then costs one pread per record instead of two. Pieces are
  // 4 KiB of table (256 RecordLocs, about the price of a 16-byte pread) loaded on first
  // touch; stores whose table exceeds kLocCacheMaxBytes read every RecordLoc from disk.
  // Entries are still checked on every use, exactly as uncached ones.
  static constexpr uint64_t kLocPieceEntries = 256;
  static constexpr uint64_t kLocCacheMaxBytes = uint64_t{256} << 20;
  std::unique_ptr<uint8_t[]> loc_table;  // length * 16 bytes, filled piece by piece
  // Per piece: 0 absent, 1 being read by some lane, 2 present. A lane that finds a piece
  // being read by another reads its one RecordLoc directly instead of waiting.
  std::unique_ptr<std::atomic<uint8_t>[]> loc_piece_state;

  // Performance note: records are copied (raw) or decoded (zstd) straight from
  // read-only mappings of the data files rather than pread. For a small record the
  // system call costs more than the copy (about 1 us against 0.3 us for 2 KiB on the
  // machine of docs/bench.md), a compressed frame needs no scratch copy, and a large
  // record is copied at memcpy speed instead of through the kernel's per-page read
  // path (about 1.4x faster for 147 KiB). Records over kMappedRecordMax stored bytes
  // use the mapping only when their pages are already in the page cache (one mincore
  // call), so a cold read stays one pread with proper I/O instead of page faults.
  // Mappings cover [0, tail) of files whose size open() checked; the shared lock keeps
  // writers from truncating them. Empty when OpenOptions::map_records is off or mmap
  // fails (then every record is pread).
  static constexpr uint32_t kMappedRecordMax = 64 << 10;
  static constexpr uint32_t kResidentCheckMax = 16 << 20;  // larger records: always pread
  std::vector<io::MappedFile> maps;                        // per shard
  // False during scan(): a sequential pass over a whole store through the mappings would
  // make every page it touched count in the process's RSS, and scans promise memory
  // bounded by their window. Random gathers (the loader's access pattern) use them.
  bool maps_allowed = true;
  std::vector<std::vector<unsigned char>> residency;  // per lane: mincore's page vector
  const uintptr_t page_size = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));

  Impl(store::StoreFiles f, std::shared_ptr<Lanes> lanes, bool map_records)
      : files(std::move(f)),
        pool(std::move(lanes)),
        remote_depth(files.open_micros <= kNearServerMicros ? std::min(pool->count(), kNearRequests) : pool->count()) {
    for (size_t i = 0; i < pool->count(); ++i) {
      decoders.emplace_back(files.page.codec, files.dictionary);
      scratch.emplace_back();
      residency.emplace_back();
    }
    maps.resize(files.page.data_shards);
    if (map_records)  // files.data: a remote store has no mappings
      for (size_t s = 0; s < files.data.size(); ++s) maps[s] = io::MappedFile::map(files.data[s], files.page.tails[s]);
    const uint64_t length = files.page.length;
    if (length > 0 && length <= kLocCacheMaxBytes / format::kRecordLocSize) {
      // Not value-initialized: untouched pages of the table cost no memory.
      loc_table = std::make_unique_for_overwrite<uint8_t[]>(length * format::kRecordLocSize);
      loc_piece_state = std::make_unique<std::atomic<uint8_t>[]>((length + kLocPieceEntries - 1) / kLocPieceEntries);
    }
  }

  // Reads and decodes one record whose location is known into dst.
  Status read_record(size_t lane, uint64_t id, const RecordLoc& loc, uint8_t* dst) {
    ZREC_RETURN_IF_ERROR(store::check_record_loc(files, files.page.tails.data(), id, loc));
    const uint32_t shard = static_cast<uint32_t>(id % files.page.data_shards);
    const io::Readable& data = files.data_file(shard);
    // check_record_loc bounded offset + phys_length by the tail, the mapping's length.
    const uint8_t* src = nullptr;
    if (maps_allowed && maps[shard].data() != nullptr) {
      const uint8_t* p = maps[shard].data() + loc.offset;
      if (loc.phys_length <= kMappedRecordMax ||
          (loc.phys_length <= kResidentCheckMax && resident(lane, p, loc.phys_length)))
        src = p;
    }
    if (src == nullptr && files.page.codec == Codec::kRaw) {
      ZREC_RETURN_IF_ERROR(data.pread_exact(dst, loc.logic_length, loc.offset));
      src = dst;
    } else if (src == nullptr) {
      // Performance note: scratch only grows, so steady-state gathers never allocate.
      auto& buf = scratch[lane];
      if (buf.size() < loc.phys_length) buf.resize(loc.phys_length);
      ZREC_RETURN_IF_ERROR(data.pread_exact(buf.data(), loc.phys_length, loc.offset));
      src = buf.data();
    }
    return decode_record(lane, id, loc, src, dst);
  }

  // Record `id`'s stored bytes `src` (its RecordLoc checked) into dst: copied (raw;
  // nothing to do when src is dst) or decoded, then a Ragged prefix checked.
  Status decode_record(size_t lane, uint64_t id, const RecordLoc& loc, const uint8_t* src, uint8_t* dst) {
    if (files.page.codec == Codec::kRaw) {
      if (src != dst) std::memcpy(dst, src, loc.logic_length);
    } else {
      Status s = decoders[lane].decode(src, loc.phys_length, dst, loc.logic_length);
      if (!s.is_ok())
        return store::malformed_store(files.path, format::data_file_name(id % files.page.data_shards) + ": record " +
                                                      std::to_string(id) + " (offset " + std::to_string(loc.offset) +
                                                      "): " + s.message());
    }
    if (!files.schema.is_dense()) return store::check_ragged_prefix(files, id, dst, loc.logic_length);
    return Status::ok();
  }

  // Plans a window [begin, end) of a scan's chunk of a remote store (zrec/remote.h) as
  // requests, one claim each: a request costs a round trip whatever its size, and a
  // paid bucket charges for each, but no byte may be fetched twice. So the records are
  // sorted by data file and offset (a record asked for twice is in one claim, read once),
  // and neighbours share a request across every gap of at most kFreeGap (fewer bytes
  // than a request's own headers) and then across the smallest other gaps until those
  // reach a 32nd of the records' own bytes (kRemoteGapShare; a gap above kRemoteGap
  // never), each request at most remote_run() long. No byte of a file is asked twice,
  // so a gather never receives more than the files hold.
  //
  // Performance note: claims used to be runs of the window's own order with every gap
  // under 64 KiB bridged: 500 random records of a 124 KB store received 1.55 MB in 140
  // requests (12.5x the store) because claims overlapped; now the bytes received are the
  // distinct records' plus at most a 32nd per window (docs/remote.md, "What a remote read costs").
  static constexpr uint64_t kRemoteGap = 64 << 10;
  static constexpr uint64_t kRemoteGapShare = 32;
  static constexpr uint64_t kFreeGap = 1 << 10;
  // The longest range of one remote request: the lanes' share of kRemoteBytesInFlight,
  // between 1 MiB (fewer bytes than that a request would spend its round trip on) and
  // kMaxStoredRun.
  uint64_t remote_run() const {
    return std::clamp<uint64_t>(kRemoteBytesInFlight / remote_depth, uint64_t{1} << 20, kMaxStoredRun);
  }

  // Positions whose record an earlier window fetched (repeats: store/remote_repeats.h)
  // are claims of their own at the end of the order, read from the copy it kept.
  void plan_remote(std::span<const uint64_t> ids, std::span<const RecordLoc> locs, size_t begin, size_t end,
                   store::RemoteRepeats& repeats, std::vector<size_t>& order, std::vector<size_t>& bounds) const {
    const uint32_t shards = files.page.data_shards;
    order.clear();
    std::vector<size_t> copied;
    for (size_t k = begin; k < end; ++k) (repeats.plan(k, begin) ? copied : order).push_back(k);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const uint64_t sa = ids[a] % shards, sb = ids[b] % shards;
      if (sa != sb) return sa < sb;
      return locs[a].offset != locs[b].offset ? locs[a].offset < locs[b].offset : a < b;
    });
    // gap[i]: the bytes between order[i]'s run so far and order[i + 1] (0 when they
    // overlap: the same record twice); kNoBridge across data files.
    constexpr uint64_t kNoBridge = UINT64_MAX;
    std::vector<uint64_t> gap(order.size(), kNoBridge);
    uint64_t distinct = 0, covered = 0;
    for (size_t i = 0; i < order.size(); ++i) {
      const RecordLoc& r = locs[order[i]];
      const bool same_file = i > 0 && ids[order[i]] % shards == ids[order[i - 1]] % shards;
      if (!same_file) covered = r.offset;
      if (same_file) gap[i - 1] = r.offset > covered ? r.offset - covered : 0;
      const uint64_t r_end = r.offset + r.phys_length;
      if (r_end > covered) distinct += r_end - std::max(covered, r.offset);
      covered = std::max(covered, r_end);
    }
    std::vector<size_t> by_gap;
    for (size_t i = 0; i + 1 < order.size(); ++i)
      if (gap[i] <= kRemoteGap) by_gap.push_back(i);
    std::sort(by_gap.begin(), by_gap.end(), [&](size_t a, size_t b) { return gap[a] < gap[b]; });
    std::vector<bool> bridged(order.size(), false);
    uint64_t budget = distinct / kRemoteGapShare;
    for (const size_t i : by_gap) {
      if (gap[i] > kFreeGap && gap[i] > budget) break;
      if (gap[i] > kFreeGap) budget -= gap[i];
      bridged[i] = true;
    }
    bounds.assign(1, 0);
    uint64_t run_start = order.empty() ? 0 : locs[order[0]].offset;
    for (size_t i = 1; i < order.size(); ++i) {
      const RecordLoc& r = locs[order[i]];
      if (!bridged[i - 1] || (gap[i - 1] > 0 && r.offset + r.phys_length - run_start > remote_run())) {
        bounds.push_back(i);
        run_start = r.offset;
      }
    }
    if (order.empty()) bounds.clear();
    for (const size_t k : copied) {
      bounds.push_back(order.size());
      order.push_back(k);
    }
    bounds.push_back(order.size());
  }

  // Reads one planned claim `ks` (plan_remote: records of one data file by offset) with
  // one request, record k into dst(k).
  Status read_remote_claim(size_t lane, std::span<const uint64_t> ids, std::span<const RecordLoc> locs,
                           store::RemoteRepeats& repeats, std::span<const size_t> ks,
                           const std::function<uint8_t*(size_t)>& dst) {
    if (ks.size() == 1 && repeats.from_copy(ks.front()))
      return repeats.take(ks.front(), dst(ks.front()), locs[ks.front()].logic_length);
    Status s = fetch_remote_claim(lane, ids, locs, ks, dst);
    for (const size_t k : ks) {
      if (s.is_ok()) {
        repeats.read(k, dst(k), locs[k].logic_length);
      } else {
        repeats.failed(k, s);
      }
    }
    return s;
  }

  Status fetch_remote_claim(size_t lane, std::span<const uint64_t> ids, std::span<const RecordLoc> locs,
                            std::span<const size_t> ks, const std::function<uint8_t*(size_t)>& dst) {
    for (const size_t k : ks)
      ZREC_RETURN_IF_ERROR(store::check_record_loc(files, files.page.tails.data(), ids[k], locs[k]));
    const uint32_t shard = static_cast<uint32_t>(ids[ks.front()] % files.page.data_shards);
    if (ks.size() == 1 && files.page.codec == Codec::kRaw) {  // one raw record: straight into its slot
      const size_t k = ks.front();
      ZREC_RETURN_IF_ERROR(files.data_file(shard).pread_exact(dst(k), locs[k].logic_length, locs[k].offset));
      return decode_record(lane, ids[k], locs[k], dst(k), dst(k));
    }
    const uint64_t start = locs[ks.front()].offset;
    uint64_t stop = start;
    for (const size_t k : ks) stop = std::max(stop, locs[k].offset + locs[k].phys_length);
    auto& buf = scratch[lane];
    if (buf.size() < stop - start) buf.resize(stop - start);
    ZREC_RETURN_IF_ERROR(files.data_file(shard).pread_exact(buf.data(), stop - start, start));
    for (const size_t k : ks)
      ZREC_RETURN_IF_ERROR(decode_record(lane, ids[k], locs[k], buf.data() + (locs[k].offset - start), dst(k)));
    return Status::ok();
  }

  // Whether every page of [p, p + n) of a mapping is in the page cache (mincore).
  bool resident(size_t lane, const uint8_t* p, uint64_t n) {
    const uintptr_t page = page_size;
    const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(p) + n;
    const size_t pages = (end - first + page - 1) / page;
    auto& vec = residency[lane];
    if (vec.size() < pages) vec.resize(pages);  // grows to the largest record, then reused
    if (::mincore(reinterpret_cast<void*>(first), end - first, vec.data()) != 0) return false;
    for (size_t i = 0; i < pages; ++i)
      if ((vec[i] & 1) == 0) return false;
    return true;
  }

  // RecordLoc[id] (id < length), unchecked: callers run check_record_loc.
  Result<RecordLoc> read_loc(uint64_t id) const {
    if (loc_table) {
      const uint64_t piece = id / kLocPieceEntries;
      std::atomic<uint8_t>& state = loc_piece_state[piece];
      uint8_t seen = state.load(std::memory_order_acquire);
      if (seen == 0 && state.compare_exchange_strong(seen, 1, std::memory_order_acquire)) {
        const uint64_t first = piece * kLocPieceEntries;
        const uint64_t count = std::min(kLocPieceEntries, files.page.length - first);
        Status s = files.meta_file().pread_exact(&loc_table[first * format::kRecordLocSize],
                                                 count * format::kRecordLocSize, format::record_loc_offset(first));
        state.store(s.is_ok() ? 2 : 0, std::memory_order_release);
        ZREC_RETURN_IF_ERROR(s);
        seen = 2;
      }
      if (seen == 2) return format::decode_record_loc(&loc_table[id * format::kRecordLocSize]);
    }
    uint8_t buf[format::kRecordLocSize];
    ZREC_RETURN_IF_ERROR(files.meta_file().pread_exact(buf, sizeof buf, format::record_loc_offset(id)));
    return format::decode_record_loc(buf);
  }

  // RecordLocs of arbitrary `ids` (a chunk of a scan: --sample, --shuffle, an ID list),
  // checked, into out. Performance note: not through the table cache (read_loc), whose
  // pieces a scan would touch once each and keep: a sample of 10^5 records of a
  // 10^7-record store held 160 MiB of table that way. The IDs are sorted and those
  // within 256 entries (4 KiB of table) of a group's first are read with one pread, the
  // groups on the lanes: memory of the chunk only, and for a dense selection fewer reads
  // than IDs (a remote store: fewer requests).
  // The RecordLocs of scattered `ids` (a scan's chunk: at most kScatteredLocChunk), each
  // checked, into out[k].
  //
  // Performance note: the IDs are bucketed by table segment with a counting sort, in
  // time linear in the IDs; sorting them (by an index array compared through the IDs)
  // took 6% of a shuffle of 10^7 records at 2^20 IDs a chunk. A dense segment (every
  // segment of a shuffle's chunk past a few million records) is then one pread of up to
  // 1 MiB instead of up to 256 of 4 KiB: the bytes copied are the same, the system
  // calls 256 times fewer.
  Status read_scattered_locs(std::span<const uint64_t> ids, RecordLoc* out) const {
    if (ids.empty()) return Status::ok();
    const auto [lo, hi] = std::minmax_element(ids.begin(), ids.end());
    const uint64_t first = *lo, range = *hi - *lo + 1;
    // Segments of the table the IDs span; wider buckets when they are few and far
    // apart, so the counts stay within the IDs' number.
    int shift = std::countr_zero(kLocSegmentEntries);
    while ((range >> shift) > ids.size()) ++shift;
    const size_t buckets = static_cast<size_t>(((range - 1) >> shift) + 1);
    std::vector<uint32_t> start(buckets + 1, 0);
    for (uint64_t id : ids) ++start[((id - first) >> shift) + 1];
    for (size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
    std::vector<uint32_t> order(ids.size());
    {
      std::vector<uint32_t> fill(start.begin(), start.end() - 1);
      for (uint32_t k = 0; k < ids.size(); ++k) order[fill[(ids[k] - first) >> shift]++] = k;
    }
    std::vector<std::unique_ptr<uint8_t[]>> tables(pool->count());
    const size_t block = block_size(buckets);
    return pool->run((buckets + block - 1) / block, [&](size_t lane, size_t b) -> Status {
      if (!tables[lane])
        tables[lane] = std::make_unique_for_overwrite<uint8_t[]>(kLocSegmentEntries * format::kRecordLocSize);
      for (size_t g = b * block; g < std::min(buckets, (b + 1) * block); ++g)
        ZREC_RETURN_IF_ERROR(
            read_loc_bucket(ids, {order.data() + start[g], start[g + 1] - start[g]}, tables[lane].get(), out));
      return Status::ok();
    });
  }

  // The RecordLocs of the IDs ids[k] for k in `group` (one bucket of read_scattered_locs),
  // read through `table` (kLocSegmentEntries entries).
  Status read_loc_bucket(std::span<const uint64_t> ids, std::span<uint32_t> group, uint8_t* table,
                         RecordLoc* out) const {
    if (group.empty()) return Status::ok();
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t k : group) {
      lo = std::min(lo, ids[k]);
      hi = std::max(hi, ids[k]);
    }
    if (group.size() >= kDenseSegmentIds && hi - lo < kLocSegmentEntries)
      return decode_locs(ids, group, lo, hi - lo + 1, table, out);
    // Sparse: by the 4 KiB pieces the IDs fall in, in ID order.
    std::sort(group.begin(), group.end(), [&](uint32_t a, uint32_t b) { return ids[a] < ids[b]; });
    for (size_t i = 0; i < group.size();) {
      size_t j = i + 1;
      while (j < group.size() && ids[group[j]] - ids[group[i]] < kLocPieceEntries) ++j;
      ZREC_RETURN_IF_ERROR(
          decode_locs(ids, group.subspan(i, j - i), ids[group[i]], ids[group[j - 1]] - ids[group[i]] + 1, table, out));
      i = j;
    }
    return Status::ok();
  }

  // Reads table entries [first, first + count) into `table` and decodes and checks the
  // RecordLoc of ids[k] for every k in `group` (each ID in that range) into out[k].
  Status decode_locs(std::span<const uint64_t> ids, std::span<const uint32_t> group, uint64_t first, uint64_t count,
                     uint8_t* table, RecordLoc* out) const {
    ZREC_RETURN_IF_ERROR(
        files.meta_file().pread_exact(table, count * format::kRecordLocSize, format::record_loc_offset(first)));
    for (uint32_t k : group) {
      out[k] = format::decode_record_loc(&table[(ids[k] - first) * format::kRecordLocSize]);
      ZREC_RETURN_IF_ERROR(store::check_record_loc(files, files.page.tails.data(), ids[k], out[k]));
    }
    return Status::ok();
  }

  // Splits [0, n) into contiguous blocks for the lanes.
  size_t block_size(size_t n) const {
    return std::max<size_t>(1, (n + pool->count() * kBlocksPerLane - 1) / (pool->count() * kBlocksPerLane));
  }

  Status check_ids(std::span<const uint64_t> ids) const {
    for (uint64_t id : ids)
      if (id >= files.page.length)
        return invalid_argument("record " + std::to_string(id) + " is out of range for store '" + files.path + "' of " +
                                std::to_string(files.page.length) + " records");
    return Status::ok();
  }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const std::string& path, const OpenOptions& options, const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(auto files, store::load_store_files(path, io::LockMode::kShared, ctx));
  // A remote store's lanes mostly wait on the network: the number of lanes is the number
  // of requests in flight, whatever the CPUs (zrec/remote.h).
  const bool remote = files.is_remote();
  auto lanes = ctx.lanes ? ctx.lanes : std::make_shared<Lanes>(read_lane_count(path));
  auto impl = std::make_unique<Impl>(std::move(files), std::move(lanes), options.map_records && !remote);
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

const std::string& Store::path() const { return impl_->files.path; }
uint64_t Store::length() const { return impl_->files.page.length; }
const Schema& Store::schema() const { return impl_->files.schema; }
Codec Store::codec() const { return impl_->files.page.codec; }
bool Store::codec_pending() const { return impl_->files.codec_pending(); }
uint32_t Store::data_shards() const { return impl_->files.page.data_shards; }
uint64_t Store::tail(uint32_t shard) const { return impl_->files.page.tails[shard]; }
uint64_t Store::stored_bytes() const {
  uint64_t total = 0;
  for (uint32_t shard = 0; shard < impl_->files.page.data_shards; ++shard) total += impl_->files.page.tails[shard];
  return total;
}
uint64_t Store::dict_bytes() const { return impl_->files.dictionary ? impl_->files.dictionary->bytes().size() : 0; }
const std::shared_ptr<Lanes>& Store::lanes() const { return impl_->pool; }
bool Store::writer_active() const { return impl_->files.writer_active; }

std::vector<std::pair<std::string, uint64_t>> Store::file_sizes() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  auto add = [&](const std::string& name, const io::Readable& f) {
    auto size = f.size();
    out.emplace_back(name, size.is_ok() ? size.value() : 0);
  };
  add(format::kMetaFile, impl_->files.meta_file());
  for (uint32_t s = 0; s < data_shards(); ++s) add(format::data_file_name(s), impl_->files.data_file(s));
  if (impl_->files.dictionary) out.emplace_back(format::kDictFile, impl_->files.dictionary->bytes().size());
  return out;
}

Status Store::read_locs(uint64_t first, uint64_t count, RecordLoc* out) const {
  if (count == 0) return Status::ok();
  if (first > length() || count > length() - first)
    return invalid_argument("records " + std::to_string(first) + ".." + std::to_string(first + count) +
                            " are out of range for a store of " + std::to_string(length()) + " records");
  std::vector<uint8_t> bytes(count * format::kRecordLocSize);
  ZREC_RETURN_IF_ERROR(
      impl_->files.meta_file().pread_exact(bytes.data(), bytes.size(), format::record_loc_offset(first)));
  for (uint64_t k = 0; k < count; ++k) {
    out[k] = format::decode_record_loc(&bytes[k * format::kRecordLocSize]);
    ZREC_RETURN_IF_ERROR(store::check_record_loc(impl_->files, impl_->files.page.tails.data(), first + k, out[k]));
  }
  return Status::ok();
}

Status Store::read_locs(std::span<const uint64_t> ids, RecordLoc* out) const {
  Impl& m = *impl_;
  ZREC_RETURN_IF_ERROR(m.check_ids(ids));
  auto one = [&](size_t k) -> Status {
    ZREC_ASSIGN_OR_RETURN(out[k], m.read_loc(ids[k]));
    return store::check_record_loc(m.files, m.files.page.tails.data(), ids[k], out[k]);
  };
  // From the in-memory table this is a few loads per id: waking lanes would cost more.
  // A remote store's pieces are requests: those go out on the lanes, several at once.
  if (m.loc_table && !m.files.is_remote()) {
    for (size_t k = 0; k < ids.size(); ++k) ZREC_RETURN_IF_ERROR(one(k));
    return Status::ok();
  }
  const size_t block = m.block_size(ids.size());
  return m.pool->run((ids.size() + block - 1) / block, [&](size_t, size_t b) -> Status {
    for (size_t k = b * block; k < std::min(ids.size(), (b + 1) * block); ++k) ZREC_RETURN_IF_ERROR(one(k));
    return Status::ok();
  });
}

Status Store::gather(std::span<const uint64_t> ids, const RecordLoc* locs, uint8_t* dest,
                     std::span<const uint64_t> dest_offsets) {
  Impl& m = *impl_;
  ZREC_RETURN_IF_ERROR(m.check_ids(ids));
  if (dest_offsets.empty() && !m.files.schema.is_dense())
    return invalid_argument("gather from a Ragged store needs destination offsets");
  const size_t n = ids.size();
  // Record k goes to [dest_offsets[k], dest_offsets[k + 1]): one more offset than ids.
  if (!dest_offsets.empty() && dest_offsets.size() != n + 1)
    return invalid_argument("gather of " + std::to_string(n) + " records needs " + std::to_string(n + 1) +
                            " destination offsets (each record's start, then the end), not " +
                            std::to_string(dest_offsets.size()));
  const size_t block = m.block_size(n);
  const size_t blocks = (n + block - 1) / block;
  const uint64_t width = m.files.dense_width;
  return m.pool->run(blocks, [&](size_t lane, size_t b) -> Status {
    const size_t end = std::min(n, (b + 1) * block);
    for (size_t k = b * block; k < end; ++k) {
      RecordLoc loc;
      if (locs != nullptr) {
        loc = locs[k];
      } else {
        ZREC_ASSIGN_OR_RETURN(loc, m.read_loc(ids[k]));
      }
      uint8_t* dst;
      if (dest_offsets.empty()) {
        dst = dest + k * width;
      } else {
        if (dest_offsets[k + 1] - dest_offsets[k] != loc.logic_length) {
          ZREC_RETURN_IF_ERROR(store::check_record_loc(m.files, m.files.page.tails.data(), ids[k], loc));
          return invalid_argument("destination slot of record " + std::to_string(ids[k]) +
                                  " does not match its logic_length");
        }
        dst = dest + dest_offsets[k];
      }
      ZREC_RETURN_IF_ERROR(m.read_record(lane, ids[k], loc, dst));
    }
    return Status::ok();
  });
}

// Performance note: scan reads ahead. A reader thread (the only user of the lanes while
// the scan runs) gathers the next window into one of two buffers while fn handles the
// other, so decoding overlaps what the caller does with the records (recompress
// encodes them, cat writes them out, digest hashes them). Each buffer holds half the
// window budget, so the memory of a scan stays within window_bytes. The lanes go from
// one window to the next without waiting for each other (store/scan_windows.h).
Status Store::scan(std::span<const uint64_t> ids, uint64_t window_bytes,
                   const std::function<Status(const Window&)>& fn) {
  impl_->maps_allowed = false;
  struct RestoreMaps {
    Impl& m;
    ~RestoreMaps() { m.maps_allowed = true; }
  } restore{*impl_};
  Impl& m = *impl_;
  ZREC_RETURN_IF_ERROR(m.check_ids(ids));
  store::ScanWindows windows(std::max<uint64_t>(1, window_bytes / 2), m.pool->count());
  store::RemoteRepeats repeats;  // a remote store's records asked for again in a later window

  auto read_windows = [&]() -> Status {
    std::vector<RecordLoc> locs;
    uint64_t count = 0;
    for (uint64_t chunk = 0; chunk < ids.size() && windows.going(); chunk += count) {
      count = std::min<uint64_t>(kLocChunk, ids.size() - chunk);
      // A run of consecutive IDs (the common `cat` of a range) loads its table slice in
      // one read; any other selection reads the table pieces its IDs fall in, in larger
      // chunks, where more of the IDs share a piece (a shuffle of 10^7 records: 20%
      // faster than chunks of kLocChunk).
      const bool consecutive = is_consecutive(ids.subspan(chunk, count));
      if (!consecutive) count = std::min<uint64_t>(kScatteredLocChunk, ids.size() - chunk);
      auto chunk_ids = ids.subspan(chunk, count);
      locs.resize(count);
      if (consecutive) {
        ZREC_RETURN_IF_ERROR(read_locs(chunk_ids.front(), count, locs.data()));
      } else {
        ZREC_RETURN_IF_ERROR(m.read_scattered_locs(chunk_ids, locs.data()));
      }
      // Scattered IDs are read by ID within each window (scan_windows.h, begin_chunk).
      windows.begin_chunk(chunk_ids, locs, chunk, !consecutive && !m.files.is_remote());
      if (m.files.is_remote()) {
        // Copies of repeated records held at once: at most one window's budget more.
        repeats.begin_chunk(chunk_ids, locs, std::max<uint64_t>(1, window_bytes / 2));
        windows.set_plan([&](size_t begin, size_t end, std::vector<size_t>& order, std::vector<size_t>& bounds) {
          m.plan_remote(chunk_ids, locs, begin, end, repeats, order, bounds);
        });
        const store::ScanWindows::ReadPlanned read_claim = [&](size_t lane, std::span<const size_t> ks,
                                                               const std::function<uint8_t*(size_t)>& dst) {
          return m.read_remote_claim(lane, chunk_ids, locs, repeats, ks, dst);
        };
        ZREC_RETURN_IF_ERROR(
            m.pool->run(m.remote_depth, [&](size_t lane, size_t) { return windows.work(lane, read_claim); }));
        continue;
      }
      const store::ScanWindows::ReadOne read_one = [&](size_t lane, size_t k, uint8_t* dst) {
        return m.read_record(lane, chunk_ids[k], locs[k], dst);
      };
      ZREC_RETURN_IF_ERROR(
          m.pool->run(m.pool->count(), [&](size_t lane, size_t) { return windows.work(lane, read_one); }));
    }
    return Status::ok();
  };

  std::thread reader = start_background_thread([&] {
    // An exception (bad_alloc) must not escape a thread: it becomes the scan's error.
    try {
      windows.finish(read_windows());
    } catch (const std::exception& e) {
      windows.finish(io_error(std::string("reading a window failed: ") + e.what()));
    }
  });
  // If fn throws, the reader is stopped and joined before the exception leaves.
  struct JoinReader {
    store::ScanWindows& windows;
    std::thread& reader;
    ~JoinReader() {
      windows.stop();
      if (reader.joinable()) reader.join();
    }
  } join_reader{windows, reader};
  Status result;
  while (store::ScanSlot* slot = windows.next()) {
    result = fn(Window{slot->ids, slot->buffer.get(), slot->offsets, slot->first_index});
    windows.release(slot);
    if (!result.is_ok()) break;
  }
  windows.stop();
  reader.join();
  return result.is_ok() ? windows.reader_status() : result;
}

bool Store::checksum() const { return store::read_checksum_setting(impl_->files).checksum; }

const std::vector<uint8_t>& Store::dictionary() const {
  static const std::vector<uint8_t> kNone;
  return impl_->files.dictionary ? impl_->files.dictionary->bytes() : kNone;
}

bool Store::checks_need_no_bytes() const {
  return impl_->files.page.codec == Codec::kRaw && impl_->files.schema.is_dense();
}

int Store::data_fd(uint32_t shard) const { return impl_->files.is_remote() ? -1 : impl_->files.data[shard].fd(); }
Status Store::read_data(uint32_t shard, uint64_t offset, uint64_t n, uint8_t* dst) const {
  if (shard >= data_shards() || offset > tail(shard) || n > tail(shard) - offset)
    return invalid_argument("bytes " + std::to_string(offset) + "+" + std::to_string(n) + " are not within data " +
                            "shard " + std::to_string(shard) + " of store '" + path() + "'");
  return impl_->files.data_file(shard).pread_exact(dst, n, offset);
}

bool Store::is_remote() const { return impl_->files.is_remote(); }

Status Store::read_stored(std::span<const uint64_t> ids, const RecordLoc* locs, std::vector<uint8_t>& buffer,
                          std::vector<uint64_t>& offsets, bool read_bytes) {
  Impl& m = *impl_;
  ZREC_RETURN_IF_ERROR(m.check_ids(ids));
  const size_t n = ids.size();
  const uint32_t shards = m.files.page.data_shards;
  for (size_t k = 0; k < n; ++k)
    ZREC_RETURN_IF_ERROR(store::check_record_loc(m.files, m.files.page.tails.data(), ids[k], locs[k]));
  // Physical order: by shard, then offset. Adjacent records form one run (one pread).
  // Performance note: bucketed by shard in input order, then each bucket sorted by
  // offset only if it is not already: a window of consecutive IDs is in offset order in
  // every shard of any store whose writers only appended. A comparison sort of the whole
  // window took 12% of a reshard of 60-byte zstd frames.
  auto shard_of = [&](size_t k) { return static_cast<uint32_t>(ids[k] % shards); };
  std::vector<size_t> order(n);
  {
    std::vector<size_t> bucket_start(shards + 1, 0);
    for (size_t k = 0; k < n; ++k) ++bucket_start[shard_of(k) + 1];
    for (uint32_t sh = 0; sh < shards; ++sh) bucket_start[sh + 1] += bucket_start[sh];
    std::vector<size_t> fill(bucket_start.begin(), bucket_start.end() - 1);
    for (size_t k = 0; k < n; ++k) order[fill[shard_of(k)]++] = k;
    auto by_offset = [&](size_t a, size_t b) { return locs[a].offset < locs[b].offset; };
    for (uint32_t sh = 0; sh < shards; ++sh) {
      const auto first = order.begin() + static_cast<ptrdiff_t>(bucket_start[sh]);
      const auto last = order.begin() + static_cast<ptrdiff_t>(bucket_start[sh + 1]);
      if (!std::is_sorted(first, last, by_offset)) std::stable_sort(first, last, by_offset);
    }
  }
  struct Run {
    uint32_t shard;
    uint64_t offset, bytes, pos;
    size_t first, count;  // order[first .. first+count)
  };
  std::vector<Run> runs;
  uint64_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    const size_t k = order[i];
    const RecordLoc& loc = locs[k];
    if (!runs.empty() && runs.back().shard == shard_of(k)) {
      Run& r = runs.back();
      const uint64_t end = r.offset + r.bytes;
      if (loc.offset < end) {
        const size_t prev = order[i - 1];
        return store::malformed_store(m.files.path, format::data_file_name(shard_of(k)) + ": records " +
                                                        std::to_string(ids[prev]) + " and " + std::to_string(ids[k]) +
                                                        " overlap (offset " + std::to_string(loc.offset) + ")");
      }
      if (loc.offset == end && r.bytes + loc.phys_length <= kMaxStoredRun) {
        r.bytes += loc.phys_length;
        ++r.count;
        total += loc.phys_length;
        continue;
      }
    }
    runs.push_back(Run{shard_of(k), loc.offset, loc.phys_length, total, i, 1});
    total += loc.phys_length;
  }
  if (!read_bytes && checks_need_no_bytes()) return Status::ok();
  if (buffer.size() < total) buffer.resize(total);
  offsets.resize(n);
  const bool ragged = !m.files.schema.is_dense();
  const uint64_t prefix = ragged ? m.files.schema.shape_prefix_bytes() : 0;
  return m.pool->run(runs.size(), [&](size_t lane, size_t ri) -> Status {
    const Run& r = runs[ri];
    ZREC_RETURN_IF_ERROR(m.files.data_file(r.shard).pread_exact(buffer.data() + r.pos, r.bytes, r.offset));
    auto& head = m.scratch[lane];  // the Ragged shape prefix of the record checked
    if (head.size() < prefix) head.resize(prefix);
    for (size_t i = r.first; i < r.first + r.count; ++i) {
      const size_t k = order[i];
      const RecordLoc& loc = locs[k];
      offsets[k] = r.pos + (loc.offset - r.offset);
      // Every record is checked as a read checks it (zstd: decoded in full, content
      // checksum included), so a copy never carries a record no read would return.
      Status s =
          m.decoders[lane].check(buffer.data() + offsets[k], loc.phys_length, loc.logic_length, head.data(), prefix);
      if (!s.is_ok())
        return store::malformed_store(m.files.path, format::data_file_name(r.shard) + ": record " +
                                                        std::to_string(ids[k]) + " (offset " +
                                                        std::to_string(loc.offset) + "): " + s.message());
      if (ragged) ZREC_RETURN_IF_ERROR(store::check_ragged_prefix(m.files, ids[k], head.data(), loc.logic_length));
    }
    return Status::ok();
  });
}

std::vector<uint64_t> ragged_dims(const Schema& schema, const uint8_t* record) {
  std::vector<uint64_t> dims(schema.ndim);
  for (uint32_t d = 0; d < schema.ndim; ++d) dims[d] = format::load_le<uint64_t>(record + 8 * d);
  return dims;
}

}  // namespace zrec
