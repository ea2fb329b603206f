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

#include "zrec/remote.h"

#include "codec/record_codec.h"
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

// Counts a problem, keeps it in the report while fewer than keep_problems are kept,
// and hands it to on_problem.
Status record_problem(VerifyReport& rep, const VerifyOptions& opt, VerifyProblem p) {
  ++rep.problem_count;
  Status s = opt.on_problem ? opt.on_problem(p) : Status::ok();
  if (rep.problems.size() < opt.keep_problems) rep.problems.push_back(std::move(p));
  return s;
}

class Verifier {
 public:
  Verifier(store::StoreFiles& files, const VerifyOptions& options, VerifyReport& report)
      : files_(files), opt_(options), rep_(report), shards_(files.page.data_shards) {}

  // Adds a problem; returns false once max_errors is reached or on_problem failed (the
  // run should stop).
  bool add(VerifyProblem p) {
    if (stopped()) return false;
    sink_error_ = record_problem(rep_, opt_, std::move(p));
    if (opt_.max_errors != 0 && rep_.problem_count >= opt_.max_errors) rep_.stopped_early = true;
    return !stopped();
  }
  bool stopped() const { return rep_.stopped_early || !sink_error_.is_ok(); }
  // What on_problem returned when it failed.
  const Status& sink_error() const { return sink_error_; }

  Status check_cancelled() const { return opt_.control.check(); }

  void progress(const char* phase, uint64_t done, uint64_t total, uint64_t bytes = 0) const {
    opt_.control.report({.records = done, .bytes = bytes, .total_records = total, .phase = phase});
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

  // The table pass: every RecordLoc against the table rules, and the overlap check.
  //
  // Performance note: the overlap check needs each data file's records in offset order.
  // Every writer of the format appends, so in a sound store each file's records lie in
  // the order of their IDs, one after the other: the pass that checks the rules also
  // follows each file's records in ID order, and for a file whose offsets only go up
  // that is the whole check, in memory that does not grow with the store (a 20-million
  // record verify took 16 bytes a record, 321 MiB, before). Only the files whose
  // records are out of that order (a store written by another tool, or damaged) are
  // sorted: in groups of files that fit overlap_memory, a file alone larger than the
  // budget swept in several passes over the table, each taking the next budget's worth
  // of its records in (offset, index) order.
  Status table_pass() {
    const uint64_t n = files_.page.length;
    std::vector<uint64_t> per_shard(shards_);
    for (uint32_t s = 0; s < shards_; ++s) per_shard[s] = n / shards_ + (s < n % shards_ ? 1 : 0);
    rep_.overlap_checked = std::all_of(per_shard.begin(), per_shard.end(), [](uint64_t c) { return c <= UINT32_MAX; });
    if (!rep_.overlap_checked)
      rep_.notes.push_back("the overlap check was skipped: a data file holds more than 2^32 records");

    std::vector<InOrder> in_order(shards_);
    note_overlap_pass(0);  // per data file a few words, whatever its records
    ZREC_RETURN_IF_ERROR(walk_table(true, [&](uint32_t shard, const OverlapEntry& e) { in_order[shard].take(e); }));
    if (!rep_.overlap_checked || stopped()) return Status::ok();
    std::vector<uint32_t> unordered;
    for (uint32_t s = 0; s < shards_; ++s) {
      if (in_order[s].ordered) in_order[s].sweep.finish(*this, s);
      else unordered.push_back(s);
    }

    // Groups of the unordered shards whose entries fit the budget (at least one shard each).
    const uint64_t budget_entries = std::max<uint64_t>(1, opt_.overlap_memory / sizeof(OverlapEntry));
    std::vector<std::vector<uint32_t>> groups;
    uint64_t entries_in_group = 0;
    for (uint32_t s : unordered) {
      if (groups.empty() || entries_in_group + per_shard[s] > budget_entries) {
        groups.emplace_back();
        entries_in_group = 0;
      }
      groups.back().push_back(s);
      entries_in_group += per_shard[s];
    }
    for (const auto& group : groups) {
      if (stopped()) break;
      if (group.size() == 1 && per_shard[group[0]] > budget_entries) {
        ZREC_RETURN_IF_ERROR(sweep_large_shard(group[0], budget_entries));
        continue;
      }
      std::vector<std::vector<OverlapEntry>> entries(shards_);
      std::vector<bool> in_group(shards_, false);
      uint64_t held = 0;
      for (uint32_t s : group) {
        in_group[s] = true;
        entries[s].reserve(per_shard[s]);
        held += entries[s].capacity() * sizeof(OverlapEntry);
      }
      note_overlap_pass(held);
      ZREC_RETURN_IF_ERROR(walk_table(false, [&](uint32_t shard, const OverlapEntry& e) {
        if (in_group[shard]) entries[shard].push_back(e);
      }));
      for (uint32_t s : group) {
        if (stopped()) break;
        Sweep sweep;
        std::sort(entries[s].begin(), entries[s].end(), offset_order);
        sweep.run(*this, s, entries[s]);
        std::vector<OverlapEntry>().swap(entries[s]);
        sweep.finish(*this, s);
      }
    }
    return Status::ok();
  }

  // One pass over the table: with `rules`, every RecordLoc is checked against the table
  // rules (problems reported); every sound one is offered to `take`.
  template <typename Take>
  Status walk_table(bool rules, Take&& take) {
    const uint64_t n = files_.page.length;
    for (uint64_t first = 0; first < n && !stopped(); first += kLocChunk) {
      ZREC_RETURN_IF_ERROR(check_cancelled());
      const uint64_t count = std::min(kLocChunk, n - first);
      ZREC_RETURN_IF_ERROR(read_locs(first, count, locs_, loc_bytes_));
      for (uint64_t k = 0; k < count; ++k) {
        const uint64_t id = first + k;
        const RecordLoc& loc = locs_[k];
        const uint32_t shard = static_cast<uint32_t>(id % shards_);
        auto broken = loc_rule(id, loc);
        if (rules) {
          ++rep_.records_checked;
          if (broken &&
              !add({broken->key,
                    where(id, shard, loc.offset) + ", " + std::to_string(loc.phys_length) + " bytes: " + broken->text,
                    id, shard, loc.offset}))
            break;
        }
        if (!broken) take(shard, OverlapEntry{loc.offset, loc.phys_length, static_cast<uint32_t>(id / shards_)});
      }
      if (rules) progress("table", std::min(n, first + count), n, (first + count) * format::kRecordLocSize);
    }
    return Status::ok();
  }

  void note_overlap_pass(uint64_t bytes) {
    if (!rep_.overlap_checked) return;
    ++rep_.overlap_passes;
    rep_.overlap_peak_bytes = std::max(rep_.overlap_peak_bytes, bytes);
  }

  static bool offset_order(const OverlapEntry& a, const OverlapEntry& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.index < b.index;
  }

  // A shard with more records than the budget: passes, each keeping the budget's worth
  // of the smallest (offset, index) keys past the last pass's (a max-heap of at most
  // `budget` entries), swept in order with the sweep's state carried across passes.
  Status sweep_large_shard(uint32_t shard, uint64_t budget) {
    std::vector<OverlapEntry> heap;
    heap.reserve(budget);
    Sweep sweep;
    std::optional<OverlapEntry> last;  // the largest key swept so far
    while (!stopped()) {
      heap.clear();
      note_overlap_pass(heap.capacity() * sizeof(OverlapEntry));
      ZREC_RETURN_IF_ERROR(walk_table(false, [&](uint32_t s, const OverlapEntry& e) {
        if (s != shard || (last && !offset_order(*last, e))) return;
        if (heap.size() < budget) {
          heap.push_back(e);
          std::push_heap(heap.begin(), heap.end(), offset_order);
        } else if (offset_order(e, heap.front())) {
          std::pop_heap(heap.begin(), heap.end(), offset_order);
          heap.back() = e;
          std::push_heap(heap.begin(), heap.end(), offset_order);
        }
      }));
      if (heap.empty()) break;
      std::sort_heap(heap.begin(), heap.end(), offset_order);
      sweep.run(*this, shard, heap);
      last = heap.back();
      if (heap.size() < budget) break;
    }
    if (!stopped()) sweep.finish(*this, shard);
    return Status::ok();
  }

  // The overlap sweep over one shard's records in (offset, index) order, fed in one or
  // more sorted runs: reports each record that starts before the end of an earlier one
  // (in file order, as found), and notes the bytes below the tail no record covers.
  struct Sweep {
    uint64_t covered = 0, max_end = 0;
    std::optional<OverlapEntry> max_entry;  // the record reaching furthest so far

    void run(Verifier& v, uint32_t shard, const std::vector<OverlapEntry>& sorted) {
      for (const OverlapEntry& e : sorted) {
        const uint64_t end = e.offset + e.phys_length;  // <= tail: checked by loc_rule
        if (max_entry && e.offset < max_end) {
          const OverlapEntry& o = *max_entry;
          const uint64_t id = uint64_t{e.index} * v.shards_ + shard;
          const uint64_t other = uint64_t{o.index} * v.shards_ + shard;
          if (!v.add({"overlap",
                      where(id, shard, e.offset) + ": bytes [" + std::to_string(e.offset) + ", " + std::to_string(end) +
                          ") overlap record " + std::to_string(other) + " at [" + std::to_string(o.offset) + ", " +
                          std::to_string(o.offset + o.phys_length) + ") (records of one data file must not overlap)",
                      id, shard, e.offset}))
            return;
        }
        const uint64_t start = std::max(e.offset, max_end);
        if (end > start) covered += end - start;
        if (!max_entry || end > max_end) {
          max_end = end;
          max_entry = e;
        }
      }
    }

    void finish(Verifier& v, uint32_t shard) const {
      const uint64_t tail = v.files_.page.tails[shard];
      if (covered < tail)
        v.rep_.notes.push_back(file_of(shard) + ": " + std::to_string(tail - covered) + " of the " +
                               std::to_string(tail) +
                               " bytes below its tail belong to no record (tolerated; a correct writer leaves none)");
    }
  };

  // One data file's records as the table pass meets them, in ID order: while their
  // offsets only go up (each record starting at or past the end of the one before), ID
  // order is offset order and the sweep runs on them as they come, with no overlap
  // possible; the first record starting before that end makes the file unordered, to
  // be sorted after the pass.
  struct InOrder {
    Sweep sweep;
    bool ordered = true;
    void take(const OverlapEntry& e) {
      if (!ordered) return;
      if (e.offset < sweep.max_end) {
        ordered = false;
        return;
      }
      const uint64_t end = e.offset + e.phys_length;
      sweep.covered += e.phys_length;
      sweep.max_end = end;
    }
  };

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

  // Reads, decodes and checks one record on a lane, and compares its SHA-256 with
  // `expected` unless that is null. Problems in the record go to the lane; the returned
  // Status is an I/O failure that stops the run.
  Status check_payload(Lane& lane, uint64_t id, const RecordLoc& loc, const RecordDigests::Hash* expected) {
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
    if (expected != nullptr) {
      lane.sha.update(record, loc.logic_length);
      const auto hash = lane.sha.finish();
      ++lane.compared;
      if (hash != *expected)
        problem("digest",
                "its bytes changed: SHA-256 " + format::to_hex(hash) + ", recorded " + format::to_hex(*expected));
    }
    // Keep lane memory near the common record size after an outsized record.
    if (lane.stored.capacity() > kKeepBufferBytes) std::vector<uint8_t>().swap(lane.stored);
    if (lane.logical_capacity > kKeepBufferBytes) {
      lane.logical.reset();
      lane.logical_capacity = 0;
    }
    return Status::ok();
  }

  // The payload pass: every record whose RecordLoc is sound is read and checked, on all
  // lanes. The digests of `against` are read a table chunk at a time, before the chunk's
  // records are handed to the lanes: whatever order the lanes take them in, the chunk's
  // digests are in memory (2 MiB), and the list is read once, from its start, in order
  // (holding it whole took 32 bytes a record: 3.2 GB at 10^8).
  Status payload_pass() {
    const uint64_t n = files_.page.length;
    Lanes& pool = *opt_.lanes;
    std::vector<Lane> lanes;
    for (size_t i = 0; i < pool.count(); ++i)
      lanes.push_back(Lane{codec::Decoder(files_.page.codec, files_.dictionary)});
    std::vector<RecordLoc> locs;
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> batch;               // indices into locs
    std::vector<VerifyProblem> found;          // one batch's, at most kBatchBytes' worth of records
    std::vector<RecordDigests::Hash> digests;  // the chunk's, from `against`
    progress("records", 0, n);
    for (uint64_t first = 0; first < n && !stopped(); first += kLocChunk) {
      const uint64_t count = std::min(kLocChunk, n - first);
      ZREC_RETURN_IF_ERROR(read_locs(first, count, locs, bytes));
      if (opt_.against != nullptr) ZREC_RETURN_IF_ERROR(opt_.against->next(count, digests));
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
        const size_t block =
            std::max<size_t>(1, (m + pool.count() * kBlocksPerLane - 1) / (pool.count() * kBlocksPerLane));
        ZREC_RETURN_IF_ERROR(pool.run((m + block - 1) / block, [&](size_t lane, size_t b) -> Status {
          for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i)
            ZREC_RETURN_IF_ERROR(check_payload(lanes[lane], first + batch[i], locs[batch[i]],
                                               batch[i] < digests.size() ? &digests[batch[i]] : nullptr));
          return Status::ok();
        }));
        found.clear();
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

  // After the payload pass (`compared`: it ran): the rest of `against` is read, to count
  // it and find any malformed line in it; a list longer than the store is a problem (a
  // record was lost), a shorter one a note.
  Status finish_digests(bool compared) {
    ZREC_ASSIGN_OR_RETURN(const uint64_t listed, opt_.against->count_all());
    const uint64_t n = files_.page.length;
    if (listed > n)
      add({"digest_count",
           "the per-record digests list " + std::to_string(listed) + " records but the store holds " +
               std::to_string(n) + " (records were lost, or the digests belong to another store)",
           std::nullopt, std::nullopt, std::nullopt});
    else if (listed < n && compared)
      rep_.notes.push_back("records " + std::to_string(listed) + ".." + std::to_string(n - 1) +
                           " have no recorded digest (appended later?) and were not compared");
    return sink_error_;
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
        rep_.notes.push_back(
            "meta.zr: the empty store is marked for zstd content checksums (it was created with them)");
      else
        rep_.notes.push_back("meta.zr: " + std::to_string(meta_size.value() - table_end) +
                             " bytes past the record table (RecordLocs past length, left by an interrupted "
                             "append; readers ignore them)");
    }
    if (!files_.url.empty()) return;  // a URL cannot be listed (zrec/remote.h)
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
  Status sink_error_;
  std::vector<RecordLoc> locs_;  // walk_table's chunk
  std::vector<uint8_t> loc_bytes_;
};

}  // namespace

Result<VerifyReport> verify_store(const std::string& path, const VerifyOptions& options) {
  VerifyReport rep;
  rep.path = redact_url(path);
  rep.quick = options.quick;
  struct stat st;
  if (!is_url(path) && ::stat(path.c_str(), &st) != 0) return io::errno_status(errno, "cannot open store", path);
  if (!is_url(path) && !S_ISDIR(st.st_mode)) return invalid_argument("'" + path + "' is not a store (not a directory)");

  auto loaded =
      store::load_store_files(path, io::LockMode::kShared, options.wait, options.snapshot_if_busy, options.remote);
  if (!loaded.is_ok()) {
    const Status& s = loaded.status();
    // A store-level rule broken (or a symbolic link where a store file belongs): the one
    // problem there is to report; the records can't be walked without a sound page.
    if (s.code() == StatusCode::kMalformed || s.code() == StatusCode::kInvalidArgument) {
      std::string message = s.message();
      const std::string prefix = "malformed store '" + rep.path + "': ";
      if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
      ZREC_RETURN_IF_ERROR(record_problem(rep, options, {"store", message, std::nullopt, std::nullopt, std::nullopt}));
      return rep;
    }
    // No meta.zr beside a store's data files: a store that lost its table, not a stranger.
    struct stat data_st;
    if (s.code() == StatusCode::kNotFound && !is_url(path) &&
        ::lstat(join_path(path, format::data_file_name(0)).c_str(), &data_st) == 0) {
      ZREC_RETURN_IF_ERROR(record_problem(rep, options,
                                          {"store", "meta.zr is missing (the directory holds data_0.zr of a store)",
                                           std::nullopt, std::nullopt, std::nullopt}));
      return rep;
    }
    return s;
  }
  store::StoreFiles& files = loaded.value();
  rep.opened = true;
  rep.writer_active = files.writer_active;
  rep.length = files.page.length;
  rep.codec = files.page.codec;
  rep.data_shards = files.page.data_shards;
  rep.schema = files.schema;

  VerifyOptions with_lanes = options;
  if (!with_lanes.lanes) with_lanes.lanes = std::make_shared<Lanes>(read_lane_budget());
  Verifier v(files, with_lanes, rep);
  if (!files.writer_active) v.leftover_notes();  // past the tails a live writer is at work, not left over
  ZREC_RETURN_IF_ERROR(v.table_pass());
  ZREC_RETURN_IF_ERROR(v.sink_error());
  if (options.quick) return rep;
  const bool compared = !v.stopped();
  if (compared) {
    ZREC_RETURN_IF_ERROR(v.payload_pass());
    ZREC_RETURN_IF_ERROR(v.sink_error());
  }
  // Read to its end even when the passes stopped early, so a malformed line anywhere in
  // it is an error whatever the store holds.
  if (options.against != nullptr) ZREC_RETURN_IF_ERROR(v.finish_digests(compared));
  return rep;
}

Status RecordDigestList::next(uint64_t count, std::vector<Hash>& out) {
  const uint64_t take = std::min<uint64_t>(count, hashes_.size() - at_);
  out.assign(hashes_.begin() + static_cast<ptrdiff_t>(at_), hashes_.begin() + static_cast<ptrdiff_t>(at_ + take));
  at_ += take;
  return Status::ok();
}

VerifyBlindSpot VerifyReport::blind_spot() const {
  if (!opened) return VerifyBlindSpot::kNone;
  if (quick) return VerifyBlindSpot::kPayloadsNotRead;
  if (length == 0 || digests_compared >= length) return VerifyBlindSpot::kNone;
  if (codec == Codec::kRaw) return VerifyBlindSpot::kRawPayloads;
  if (records_with_checksum >= length) return VerifyBlindSpot::kNone;
  return VerifyBlindSpot::kUnchecksummedFrames;
}

}  // namespace zrec
