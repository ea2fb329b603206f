// verify_store(): every check of docs/format.md §8 and more, on a whole store, reporting
// every problem found instead of stopping at the first (CONTRIBUTING.md, "verify keeps going").
//
// What is checked:
//   store level (stops at the first problem: a broken page or schema can't be walked):
//     meta.zr size, the static page, the schema, the table size, each data file present
//     (a regular file, not a symbolic link) and at least its tail long, dict.zr presence
//     and validity;
//   every record (also with `quick`): 1 <= phys_length, logic_length < 2^31, offset +
//     phys_length <= tails[shard], raw phys == logic, the Dense width or Ragged minimum,
//     and no two records overlapping in one data file;
//   every record's payload (not with `quick`): it reads, it is exactly one zstd frame
//     that decodes to exactly logic_length bytes (checking the frame's content checksum
//     when it has one), a Ragged shape prefix agrees with logic_length, and, given
//     per-record hashes (`against`), its SHA-256 equals the one recorded.
// What cannot be detected: a bit flip inside a raw record's payload (the format has no
// checksum) unless `against` is given, nor, in a zstd record without a content checksum,
// a flip that still decodes to the right number of bytes.
//
// Memory: none that grows with the store for the overlap check of a data file whose
// records lie in ID order (as every writer of the format appends them: checked as the
// table is read); for a file out of that order, 16 bytes per record (its (offset,
// length, id) sorted), in passes of at most `overlap_memory` bytes (a data file with
// more records than that is swept in several passes over ranges of offsets); plus, per lane, the
// largest record read (its stored and logical bytes); plus, with `against`, the digests
// of one table chunk (65,536 records, 2 MiB); plus the problems kept in the
// report (at most `keep_problems`: the others are counted, and handed to on_problem
// when one is set), so a table of 2^31 broken records costs no more than a sound one.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/format.h"
#include "zrec/schema.h"
#include "zrec/status.h"
#include "zrec/store.h"

namespace zrec {

struct VerifyProblem;

// Per-record SHA-256 digests of the logical records, in record ID order (as a
// digest's per_record callback receives them), read as the payload pass reaches them: verify holds one
// table chunk's worth (2 MiB), never the whole list. The list may be shorter than the
// store (the records past it are not compared) or longer (a "digest_count" problem).
class RecordDigests {
 public:
  using Hash = std::array<uint8_t, 32>;
  virtual ~RecordDigests() = default;
  // Replaces `out` with the next digests of the list, at most `count` (fewer only at its
  // end). An error (a malformed list, a failed read) stops the run and is returned.
  virtual Status next(uint64_t count, std::vector<Hash>& out) = 0;
  // Reads the rest of the list without keeping it; returns how many digests it holds in all.
  virtual Result<uint64_t> count_all() = 0;
};

// RecordDigests over a list in memory.
class RecordDigestList final : public RecordDigests {
 public:
  explicit RecordDigestList(std::vector<Hash> hashes) : hashes_(std::move(hashes)) {}
  Status next(uint64_t count, std::vector<Hash>& out) override;
  Result<uint64_t> count_all() override { return hashes_.size(); }

 private:
  std::vector<Hash> hashes_;
  uint64_t at_ = 0;
};

struct VerifyOptions {
  bool quick = false;         // check the structure (page, table, overlaps) without reading payloads
  uint64_t max_errors = 100;  // stop after this many problems; 0: never stop early
  // Per-record SHA-256 of the logical records, read from its start in ID order; records
  // at or past its end are not compared. Read to its end (its errors returned) whenever
  // the store opens and `quick` is not set; not read otherwise.
  RecordDigests* against = nullptr;
  // Memory budget of one overlap pass over data files out of ID order (16 bytes per
  // record); default 128 MiB.
  uint64_t overlap_memory = uint64_t{128} << 20;
  // Called with every problem as it is found, on the calling thread, in report order
  // (the table pass by record ID, overlaps by offset within each data file, payloads by
  // record ID, then digest_count, known once `against` is read to its end). An error it returns stops the run and is
  // returned (e.g. stdout closed).
  std::function<Status(const VerifyProblem&)> on_problem = nullptr;
  // VerifyReport::problems keeps at most this many (the first); problem_count counts all.
  uint64_t keep_problems = 10000;
};

// One problem: which record (if any), where, and the rule it breaks.
struct VerifyProblem {
  // Short stable name of the rule: "store" (a store-level rule; nothing else is checked),
  // "phys_length", "logic_length", "record_size", "past_tail", "raw_lengths",
  // "dense_width", "ragged_length", "overlap", "decode", "shape_prefix", "digest",
  // "digest_count", "stream_lengths".
  std::string rule;
  std::string message;             // what is wrong, in words (without the store path)
  std::optional<uint64_t> id;      // the record
  std::optional<uint32_t> shard;   // its data file, data_{shard}.zr
  std::optional<uint64_t> offset;  // its offset in that file
};

// What a report cannot vouch for (VerifyReport::blind_spot()): damage of a kind the
// checks that ran could not see. Callers word it (docs/verify.md shows one wording).
enum class VerifyBlindSpot {
  kNone,                 // every payload byte was covered (every frame carries a content
                         // checksum, or digests were compared for every record), the
                         // store holds no records, or it could not be opened
  kPayloadsNotRead,      // `quick`: damage inside records is not detected
  kRawPayloads,          // a raw store without digests for every record: a bit flip
                         // inside a payload cannot be detected (the format has no checksum)
  kUnchecksummedFrames,  // length - records_with_checksum zstd records carry no content
                         // checksum: a flip that still decodes to the right length is not
                         // detected in them
};

struct VerifyReport {
  std::string path;
  bool quick = false;
  // What the store is (valid when `opened`: the store-level checks passed).
  bool opened = false;
  bool writer_active = false;  // checked the last published state while a writer appends
  uint64_t length = 0;
  Codec codec = Codec::kZstd;
  // Created with CreateOptions::codec_auto and still empty (Store::codec_pending; local stores only).
  bool codec_pending = false;
  uint32_t data_shards = 0;
  Schema schema;
  // What was checked.
  uint64_t records_checked = 0;        // RecordLocs checked against the table rules
  uint64_t records_decoded = 0;        // payloads read and decoded (0 with quick)
  uint64_t stored_bytes_read = 0;      // payload bytes read
  uint64_t logical_bytes = 0;          // sum of logic_length over the records decoded
  uint64_t records_with_checksum = 0;  // zstd frames carrying a content checksum
  uint64_t digests_compared = 0;       // records compared against `against`
  bool overlap_checked = false;        // false only past 2^32 records in one shard
  uint64_t overlap_passes = 0;         // passes over the table the overlap check took (the first: the rules')
  uint64_t overlap_peak_bytes = 0;     // the most memory its entries took at once
  // Found.
  uint64_t problem_count = 0;  // problems found (problems holds the first keep_problems)
  bool stopped_early = false;  // max_errors reached: more problems may exist
  std::vector<VerifyProblem> problems;
  // Things that are allowed but worth saying: leftovers of an interrupted append past a
  // tail or past `length`, unreferenced gaps below a tail, files that are not the store's.
  std::vector<std::string> notes;

  bool valid() const { return problem_count == 0; }
  VerifyBlindSpot blind_spot() const;
};

// Verifies the store at `path` (a directory). Problems in the store go into the report
// (valid() false); the Status is an error only when the store could not be checked at
// all or reading failed: kNotFound (no such path, or no meta.zr), kInvalidArgument (not
// a directory), kBusy (a writer holds it), kIoError (a read failed), kCancelled.
// Holds the shared lock for the whole run, like any reader.
// The store is opened in `ctx` as Store::open opens one (zrec/store.h): its lanes (null:
// read_lane_budget() lanes for this call), its lock wait, snapshot_if_busy (a writer
// holds the lock and not `wait`: the last published state is checked without the lock,
// the records it holds and nothing the writer adds past it; VerifyReport::writer_active
// says so) and how a URL is read; every record is read with a pread. ctx.control is
// checked between batches (kCancelled "interrupted") and hears, from the calling thread
// after each batch: phase "table" (the RecordLoc pass; with quick the only one) or
// "records" (payloads); records <= total_records; bytes: stored bytes read so far in
// this phase (the table's, then the payloads').
Result<VerifyReport> verify_store(const std::string& path, const VerifyOptions& options = {}, const Context& ctx = {});

}  // namespace zrec
