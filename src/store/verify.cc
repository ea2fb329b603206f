// verify_store(): the whole-store check behind `zrec verify` (include/zrec/verify.h).
// The per-record rules are the reader's own (store_files.h: record_loc_rule,
// ragged_prefix_rule; codec::Decoder::decode), applied to every record, collecting
// problems instead of stopping at the first.
#include "zrec/verify.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>

#include "codec/record_codec.h"
#include "engine/thread_pool.h"
#include "format/layout.h"
#include "format/record_loc.h"
#include "format/sha256.h"
#include "store/store_files.h"

namespace zrec {

namespace {

// RecordLocs read per step of a table pass: 1 MiB of table.
constexpr uint64_t kLocChunk = 65536;
// The payload pass cuts a table chunk into batches of at most this many stored bytes,
// so progress and max_errors are looked at often even with large records.
constexpr uint64_t kBatchBytes = uint64_t{256} << 20;
// Blocks per lane in one batch: enough for dynamic balancing.
constexpr size_t kBlocksPerLane = 4;
// A lane drops buffers larger than this after the record that needed them.
constexpr size_t kKeepBufferBytes = size_t{64} << 20;

// One record of one shard, for the overlap check: 16 bytes (verify.h "Memory").
struct OverlapEntry {
  uint64_t offset;
  uint32_t phys_length;
  uint32_t index;  // id / data_shards: the record's position within its shard
};
static_assert(sizeof(OverlapEntry) == 16);

std::string file_of(uint32_t shard) { return format::data_file_name(shard); }

std::string where(uint64_t id, uint32_t shard, uint64_t offset) {
  return file_of(shard) + ": record " + std::to_string(id) + " (offset " + std::to_string(offset) + ")";
}

class Verifier {
 public:
  Verifier(store::StoreFiles& files, const VerifyOptions& options, VerifyReport& report)
      : files_(files), opt_(options), rep_(report), shards_(files.page.data_shards) {}

  // Adds a problem; returns false once max_errors is reached (the run should stop).
  bool add(VerifyProblem p) {
    if (stopped()) return false;
    ++rep_.problem_count;
    rep_.problems.push_back(std::move(p));
    if (opt_.max_errors != 0 && rep_.problem_count >= opt_.max_errors) rep_.stopped_early = true;
    return !stopped();
  }
  bool stopped() const { return rep_.stopped_early; }

  Status check_cancelled() const {
    if (opt_.cancelled && opt_.cancelled()) return Status(StatusCode::kCancelled, "interrupted");
    return Status::ok();
  }

  void progress(const char* phase, uint64_t done, uint64_t total, uint64_t bytes = 0) const {
    if (opt_.progress) opt_.progress(phase, done, total, bytes);
  }

  Status read_locs(uint64_t first, uint64_t count, std::vector<RecordLoc>& locs, std::vector<uint8_t>& bytes) {
    bytes.resize(count * format::kRecordLocSize);
    ZREC_RETURN_IF_ERROR(files_.meta.pread_exact(bytes.data(), bytes.size(), format::record_loc_offset(first)));
    locs.resize(count);
    for (uint64_t k = 0; k < count; ++k) locs[k] = format::decode_record_loc(&bytes[k * format::kRecordLocSize]);
    return Status::ok();
  }

  std::optional<store::BrokenRule> loc_rule(uint64_t id, const RecordLoc& loc) const {
    return store::record_loc_rule(files_, files_.page.tails.data(), id, loc);
  }

  // The table pass: every RecordLoc against the table rules (first group only), and the
  // overlap check in groups of shards that fit overlap_memory.
  Status table_pass() {
    const uint64_t n = files_.page.length;
    std::vector<uint64_t> per_shard(shards_);
    for (uint32_t s = 0; s < shards_; ++s) per_shard[s] = n / shards_ + (s < n % shards_ ? 1 : 0);
    rep_.overlap_checked = std::all_of(per_shard.begin(), per_shard.end(),
                                       [](uint64_t c) { return c <= UINT32_MAX; });
    if (!rep_.overlap_checked)
      rep_.notes.push_back("the overlap check was skipped: a data file holds more than 2^32 records");
    // Groups of consecutive shards whose entries fit the budget (at least one shard each).
    const uint64_t budget_entries = std::max<uint64_t>(1, opt_.overlap_memory / sizeof(OverlapEntry));
    std::vector<std::pair<uint32_t, uint32_t>> groups;  // [first, last)
    for (uint32_t s = 0; s < shards_;) {
      uint32_t e = s;
      uint64_t entries = 0;
      while (e < shards_ && (e == s || entries + per_shard[e] <= budget_entries)) entries += per_shard[e++];
      groups.emplace_back(s, e);
      s = e;
    }
    if (!rep_.overlap_checked) groups.assign(1, {0, 0});  // the rule pass alone

    std::vector<RecordLoc> locs;
    std::vector<uint8_t> bytes;
    for (size_t g = 0; g < groups.size() && !stopped(); ++g) {
      const auto [lo, hi] = groups[g];
      std::vector<std::vector<OverlapEntry>> entries(shards_);
      for (uint32_t s = lo; s < hi; ++s) entries[s].reserve(std::min(per_shard[s], budget_entries));
      for (uint64_t first = 0; first < n && !stopped(); first += kLocChunk) {
        ZREC_RETURN_IF_ERROR(check_cancelled());
        const uint64_t count = std::min(kLocChunk, n - first);
        ZREC_RETURN_IF_ERROR(read_locs(first, count, locs, bytes));
        for (uint64_t k = 0; k < count; ++k) {
          const uint64_t id = first + k;
          const RecordLoc& loc = locs[k];
          const uint32_t shard = static_cast<uint32_t>(id % shards_);
          auto broken = loc_rule(id, loc);
          if (g == 0) {
            ++rep_.records_checked;
            if (broken && !add({broken->key, where(id, shard, loc.offset) + ", " +
                                                 std::to_string(loc.phys_length) + " bytes: " + broken->text,
                                id, shard, loc.offset}))
              break;
          }
          if (broken || shard < lo || shard >= hi) continue;
          entries[shard].push_back({loc.offset, loc.phys_length, static_cast<uint32_t>(id / shards_)});
        }
        if (g == 0) progress("table", std::min(n, first + count), n, (first + count) * format::kRecordLocSize);
      }
      for (uint32_t s = lo; s < hi && !stopped(); ++s) {
        check_overlaps(s, entries[s]);
        std::vector<OverlapEntry>().swap(entries[s]);
      }
    }
    return Status::ok();
  }

  // Sorts one shard's records by offset and reports each that starts before the end of
  // an earlier one; notes the bytes below the tail that no record covers.
  void check_overlaps(uint32_t shard, std::vector<OverlapEntry>& entries) {
    std::sort(entries.begin(), entries.end(), [](const OverlapEntry& a, const OverlapEntry& b) {
      return a.offset != b.offset ? a.offset < b.offset : a.index < b.index;
    });
    std::vector<VerifyProblem> found;
    uint64_t covered = 0, max_end = 0;
    size_t max_i = SIZE_MAX;
    for (size_t i = 0; i < entries.size(); ++i) {
      const OverlapEntry& e = entries[i];
      const uint64_t end = e.offset + e.phys_length;  // <= tail: checked by loc_rule
      if (max_i != SIZE_MAX && e.offset < max_end) {
        const OverlapEntry& o = entries[max_i];
        const uint64_t id = uint64_t{e.index} * shards_ + shard;
        const uint64_t other = uint64_t{o.index} * shards_ + shard;
        found.push_back({"overlap",
                         where(id, shard, e.offset) + ": bytes [" + std::to_string(e.offset) + ", " +
                             std::to_string(end) + ") overlap record " + std::to_string(other) + " at [" +
                             std::to_string(o.offset) + ", " + std::to_string(o.offset + o.phys_length) +
                             ") (records of one data file must not overlap)",
                         id, shard, e.offset});
      }
      const uint64_t start = std::max(e.offset, max_end);
      if (end > start) covered += end - start;
      if (max_i == SIZE_MAX || end > max_end) {
        max_end = end;
        max_i = i;
      }
    }
    std::sort(found.begin(), found.end(), [](const VerifyProblem& a, const VerifyProblem& b) { return *a.id < *b.id; });
    for (auto& p : found)
      if (!add(std::move(p))) return;
    const uint64_t tail = files_.page.tails[shard];
    if (covered < tail)
      rep_.notes.push_back(file_of(shard) + ": " + std::to_string(tail - covered) + " of the " + std::to_string(tail) +
                           " bytes below its tail belong to no record (tolerated; a correct writer leaves none)");
  }

  struct Lane {
    codec::Decoder decoder;
    std::vector<uint8_t> stored{};  // phys_length <= the tail: bytes that exist
    // Not value-initialized: logic_length is only a claim until the frame decodes, and
    // a decoder writes only what a frame holds, so a table claiming 2 GiB costs nothing.
    std::unique_ptr<uint8_t[]> logical{};
    size_t logical_capacity = 0;
    format::Sha256 sha{};
    std::vector<VerifyProblem> problems{};
    uint64_t decoded = 0, stored_bytes = 0, logical_bytes = 0, checksummed = 0, compared = 0;
  };

  // Reads, decodes and checks one record on a lane. Problems in the record go to the
  // lane; the returned Status is an I/O failure that stops the run.
  Status check_payload(Lane& lane, uint64_t id, const RecordLoc& loc) {
    const uint32_t shard = static_cast<uint32_t>(id % shards_);
    const bool raw = files_.page.codec == Codec::kRaw;
    auto problem = [&](const char* rule, const std::string& text) {
      lane.problems.push_back({rule, where(id, shard, loc.offset) + ": " + text, id, shard, loc.offset});
    };
    if (lane.stored.size() < loc.phys_length) lane.stored.resize(loc.phys_length);
    ZREC_RETURN_IF_ERROR(files_.data[shard].pread_exact(lane.stored.data(), loc.phys_length, loc.offset));
    lane.stored_bytes += loc.phys_length;
    const uint8_t* record = lane.stored.data();
    if (!raw) {
      if (lane.logical_capacity < loc.logic_length) {
        lane.logical.reset();
        lane.logical = std::make_unique_for_overwrite<uint8_t[]>(loc.logic_length);
        lane.logical_capacity = loc.logic_length;
      }
      Status s = lane.decoder.decode(lane.stored.data(), loc.phys_length, lane.logical.get(), loc.logic_length);
      if (codec::frame_has_checksum(lane.stored.data(), loc.phys_length).value_or(false)) ++lane.checksummed;
      if (!s.is_ok()) {
        problem("decode", s.message());
        return Status::ok();
      }
      record = lane.logical.get();
    }
    ++lane.decoded;
    lane.logical_bytes += loc.logic_length;
    if (!files_.schema.is_dense()) {
      if (auto broken = store::ragged_prefix_rule(files_, record, loc.logic_length)) problem(broken->key, broken->text);
    }
    if (opt_.against != nullptr && id < opt_.against->size()) {
      lane.sha.update(record, loc.logic_length);
      const auto hash = lane.sha.finish();
      ++lane.compared;
      if (hash != (*opt_.against)[id])
        problem("digest", "its bytes changed: SHA-256 " + format::to_hex(hash) + ", recorded " +
                              format::to_hex((*opt_.against)[id]));
    }
    // Keep lane memory near the common record size after an outsized record.
    if (lane.stored.capacity() > kKeepBufferBytes) std::vector<uint8_t>().swap(lane.stored);
    if (lane.logical_capacity > kKeepBufferBytes) {
      lane.logical.reset();
      lane.logical_capacity = 0;
    }
    return Status::ok();
  }

  // The payload pass: every record whose RecordLoc is sound is read and checked, on all lanes.
  Status payload_pass() {
    const uint64_t n = files_.page.length;
    engine::ThreadPool pool(engine::read_lanes(opt_.threads));
    std::vector<Lane> lanes;
    for (size_t i = 0; i < pool.lanes(); ++i)
      lanes.push_back(Lane{codec::Decoder(files_.page.codec, files_.dictionary)});
    std::vector<RecordLoc> locs;
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> batch;  // indices into locs
    progress("records", 0, n);
    for (uint64_t first = 0; first < n && !stopped(); first += kLocChunk) {
      const uint64_t count = std::min(kLocChunk, n - first);
      ZREC_RETURN_IF_ERROR(read_locs(first, count, locs, bytes));
      for (uint64_t begin = 0; begin < count && !stopped();) {
        ZREC_RETURN_IF_ERROR(check_cancelled());
        // A batch: sound records up to kBatchBytes of stored bytes (at least one).
        batch.clear();
        uint64_t batch_bytes = 0, end = begin;
        for (; end < count && (batch.empty() || batch_bytes < kBatchBytes); ++end) {
          if (loc_rule(first + end, locs[end])) continue;  // reported by the table pass
          batch.push_back(end);
          batch_bytes += locs[end].phys_length;
        }
        const size_t m = batch.size();
        const size_t block = std::max<size_t>(1, (m + pool.lanes() * kBlocksPerLane - 1) / (pool.lanes() * kBlocksPerLane));
        ZREC_RETURN_IF_ERROR(pool.run((m + block - 1) / block, [&](size_t lane, size_t b) -> Status {
          for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i)
            ZREC_RETURN_IF_ERROR(check_payload(lanes[lane], first + batch[i], locs[batch[i]]));
          return Status::ok();
        }));
        std::vector<VerifyProblem> found;
        for (Lane& lane : lanes) {
          std::move(lane.problems.begin(), lane.problems.end(), std::back_inserter(found));
          lane.problems.clear();
        }
        std::stable_sort(found.begin(), found.end(),
                         [](const VerifyProblem& a, const VerifyProblem& b) { return *a.id < *b.id; });
        for (auto& p : found)
          if (!add(std::move(p))) break;
        begin = end;
        uint64_t bytes_read = 0;
        for (const Lane& lane : lanes) bytes_read += lane.stored_bytes;
        progress("records", first + end, n, bytes_read);
      }
    }
    for (const Lane& lane : lanes) {
      rep_.records_decoded += lane.decoded;
      rep_.stored_bytes_read += lane.stored_bytes;
      rep_.logical_bytes += lane.logical_bytes;
      rep_.records_with_checksum += lane.checksummed;
      rep_.digests_compared += lane.compared;
    }
    return Status::ok();
  }

  // Notes on what is allowed but worth knowing: leftovers, the checksum marker, strangers.
  void leftover_notes() {
    for (uint32_t s = 0; s < shards_; ++s) {
      auto size = files_.data[s].size();
      if (size.is_ok() && size.value() > files_.page.tails[s])
        rep_.notes.push_back(file_of(s) + ": " + std::to_string(size.value() - files_.page.tails[s]) +
                             " bytes past its tail (left by an interrupted append; readers ignore them and the "
                             "next append overwrites them)");
    }
    auto meta_size = files_.meta.size();
    const uint64_t table_end = format::record_loc_offset(files_.page.length);
    if (meta_size.is_ok() && meta_size.value() > table_end) {
      const store::ChecksumSetting setting = store::read_checksum_setting(files_);
      if (setting.marker && meta_size.value() == table_end + format::kRecordLocSize)
        rep_.notes.push_back("meta.zr: the empty store is marked for zstd content checksums (create --checksum)");
      else
        rep_.notes.push_back("meta.zr: " + std::to_string(meta_size.value() - table_end) +
                             " bytes past the record table (RecordLocs past length, left by an interrupted "
                             "append; readers ignore them)");
    }
    DIR* dir = ::opendir(files_.path.c_str());
    if (dir == nullptr) return;
    std::vector<std::string> strangers;
    while (dirent* e = ::readdir(dir)) {
      const std::string name = e->d_name;
      if (name == "." || name == ".." || name == format::kMetaFile) continue;
      if (name == format::kDictFile && files_.dictionary) continue;
      bool data = false;
      for (uint32_t s = 0; s < shards_ && !data; ++s) data = name == file_of(s);
      if (!data) strangers.push_back(name);
    }
    ::closedir(dir);
    std::sort(strangers.begin(), strangers.end());
    for (const auto& name : strangers)
      rep_.notes.push_back("'" + name + "' is not a file of this store (readers ignore it)");
  }

 private:
  store::StoreFiles& files_;
  const VerifyOptions& opt_;
  VerifyReport& rep_;
  const uint32_t shards_;
};

}  // namespace

Result<VerifyReport> verify_store(const std::string& path, const VerifyOptions& options) {
  VerifyReport rep;
  rep.path = path;
  rep.quick = options.quick;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return io::errno_status(errno, "cannot open store", path);
  if (!S_ISDIR(st.st_mode)) return invalid_argument("'" + path + "' is not a store (not a directory)");

  auto loaded = store::load_store_files(path, io::LockMode::kShared, options.wait);
  if (!loaded.is_ok()) {
    const Status& s = loaded.status();
    // A store-level rule broken (or a symbolic link where a store file belongs): the one
    // problem there is to report; the records can't be walked without a sound page.
    if (s.code() == StatusCode::kMalformed || s.code() == StatusCode::kInvalidArgument) {
      std::string message = s.message();
      const std::string prefix = "malformed store '" + path + "': ";
      if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
      rep.problem_count = 1;
      rep.problems.push_back({"store", message, std::nullopt, std::nullopt, std::nullopt});
      return rep;
    }
    // No meta.zr beside a store's data files: a store that lost its table, not a stranger.
    struct stat data_st;
    if (s.code() == StatusCode::kNotFound &&
        ::lstat(store::join_path(path, format::data_file_name(0)).c_str(), &data_st) == 0) {
      rep.problem_count = 1;
      rep.problems.push_back({"store", "meta.zr is missing (the directory holds data_0.zr of a store)",
                              std::nullopt, std::nullopt, std::nullopt});
      return rep;
    }
    return s;
  }
  store::StoreFiles& files = loaded.value();
  rep.opened = true;
  rep.length = files.page.length;
  rep.codec = files.page.codec;
  rep.data_shards = files.page.data_shards;
  rep.schema = files.schema;

  Verifier v(files, options, rep);
  v.leftover_notes();
  ZREC_RETURN_IF_ERROR(v.table_pass());
  if (!options.quick && !v.stopped()) {
    if (options.against != nullptr && options.against->size() > rep.length) {
      v.add({"digest_count",
             "the per-record digests list " + std::to_string(options.against->size()) + " records but the store holds " +
                 std::to_string(rep.length) + " (records were lost, or the digests belong to another store)",
             std::nullopt, std::nullopt, std::nullopt});
    }
    ZREC_RETURN_IF_ERROR(v.payload_pass());
    if (options.against != nullptr && options.against->size() < rep.length)
      rep.notes.push_back("records " + std::to_string(options.against->size()) + ".." + std::to_string(rep.length - 1) +
                          " have no recorded digest (appended later?) and were not compared");
  }
  return rep;
}

std::string verify_blind_spot(const VerifyReport& r) {
  if (!r.opened) return "";
  if (r.quick) return "payloads were not read (--quick): damage inside records is not detected";
  if (r.length == 0 || r.digests_compared >= r.length) return "";
  if (r.codec == Codec::kRaw)
    return "this raw store has no checksums: a bit flip inside a record's payload cannot be detected; keep "
           "per-record digests ('zrec digest --per-record STORE > sums') and check them with --against sums";
  if (r.records_with_checksum >= r.length) return "";
  return std::to_string(r.length - r.records_with_checksum) + " of " + std::to_string(r.length) +
         " records carry no zstd content checksum: a bit flip that still decodes to the right length is not "
         "detected in them (write with --checksum, or check per-record digests with --against)";
}

}  // namespace zrec
