// The whole-store check behind verify_store() (include/zrec/verify.h), one pass per
// file: the table pass (verify_table.cc), the overlap sweep of the data files whose
// records are out of ID order (verify_overlap.cc), the payload pass (verify_payload.cc);
// verify.cc holds the notes, the end of a digest list and verify_store itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "zrec/verify.h"

#include "codec/record_codec.h"
#include "format/layout.h"
#include "format/record_loc.h"
#include "format/sha256.h"
#include "store/store_files.h"

namespace zrec::store::verifying {

// RecordLocs read per step of a table pass: 1 MiB of table.
inline constexpr uint64_t kLocChunk = 65536;
// The payload pass cuts a table chunk into batches of at most this many stored bytes,
// so progress and max_errors are looked at often even with large records.
inline constexpr uint64_t kBatchBytes = uint64_t{256} << 20;
// Blocks per lane in one batch: enough for dynamic balancing.
inline constexpr size_t kBlocksPerLane = 4;
// A lane drops buffers larger than this after the record that needed them.
inline constexpr size_t kKeepBufferBytes = size_t{64} << 20;

// One record of one shard, for the overlap check: 16 bytes (verify.h "Memory").
struct OverlapEntry {
  uint64_t offset;
  uint32_t phys_length;
  uint32_t index;  // id / data_shards: the record's position within its shard
};
static_assert(sizeof(OverlapEntry) == 16);

std::string file_of(uint32_t shard);
std::string where(uint64_t id, uint32_t shard, uint64_t offset);
// Counts a problem, keeps it in the report while fewer than keep_problems are kept,
// and hands it to on_problem.
Status record_problem(VerifyReport& rep, const VerifyOptions& opt, VerifyProblem p);

class Verifier {
 public:
  // `lanes`: the lanes the payload pass runs on; `control`: what stops it and hears its progress.
  Verifier(StoreFiles& files, const VerifyOptions& options, std::shared_ptr<Lanes> lanes, const Control& control,
           VerifyReport& report)
      : files_(files),
        opt_(options),
        lanes_(std::move(lanes)),
        control_(control),
        rep_(report),
        shards_(files.page.data_shards) {}

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

  Status check_cancelled() const { return control_.check(); }

  void progress(const char* phase, uint64_t done, uint64_t total, uint64_t bytes = 0) const {
    control_.report({.records = done, .bytes = bytes, .total_records = total, .phase = phase});
  }

  Status read_locs(uint64_t first, uint64_t count, std::vector<RecordLoc>& locs, std::vector<uint8_t>& bytes) {
    bytes.resize(count * format::kRecordLocSize);
    ZREC_RETURN_IF_ERROR(files_.meta_file().pread_exact(bytes.data(), bytes.size(), format::record_loc_offset(first)));
    locs.resize(count);
    for (uint64_t k = 0; k < count; ++k) locs[k] = format::decode_record_loc(&bytes[k * format::kRecordLocSize]);
    return Status::ok();
  }

  std::optional<BrokenRule> loc_rule(uint64_t id, const RecordLoc& loc) const {
    return record_loc_rule(files_, files_.page.tails.data(), id, loc);
  }

  // The table pass: every RecordLoc against the table rules, then the overlap check of
  // each data file (verify_table.cc; the sweep of files out of ID order: verify_overlap.cc).
  Status table_pass();
  // The payload pass: every record whose RecordLoc is sound is read and checked, on all
  // lanes (verify_payload.cc).
  Status payload_pass();
  // After the payload pass (`compared`: it ran): the rest of `against` is read, to count
  // it and find any malformed line in it; a list longer than the store is a problem (a
  // record was lost), a shorter one a note.
  Status finish_digests(bool compared);
  // Notes on what is allowed but worth knowing: leftovers, the checksum marker, strangers.
  void leftover_notes();

 private:
  Status sweep_unordered(const std::vector<uint32_t>& unordered, const std::vector<uint64_t>& per_shard);
  Status sweep_large_shard(uint32_t shard, uint64_t budget);
  struct Lane;
  Status check_payload(Lane& lane, uint64_t id, const RecordLoc& loc, const RecordDigests::Hash* expected);

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

  // The overlap sweep over one shard's records in (offset, index) order, fed in one or
  // more sorted runs: reports each record that starts before the end of an earlier one
  // (in file order, as found), and notes the bytes below the tail no record covers.
  struct Sweep {
    uint64_t covered = 0, max_end = 0;
    std::optional<OverlapEntry> max_entry;  // the record reaching furthest so far

    void run(Verifier& v, uint32_t shard, const std::vector<OverlapEntry>& sorted);
    void finish(Verifier& v, uint32_t shard) const;
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

 private:
  StoreFiles& files_;
  const VerifyOptions& opt_;
  const std::shared_ptr<Lanes> lanes_;
  const Control& control_;
  VerifyReport& rep_;
  const uint32_t shards_;
  Status sink_error_;
  std::vector<RecordLoc> locs_;  // walk_table's chunk
  std::vector<uint8_t> loc_bytes_;
};

}  // namespace zrec::store::verifying
