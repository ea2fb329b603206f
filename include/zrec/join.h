// Joining stores by placement: the parallel join of several stores (docs/scale-out.md).
//
// Parts with the same schema, codec, dictionary, checksum setting and shard count S join
// without touching any record: record i of DEST lies in shard i % S, so a part whose
// first record becomes DEST's record `base` maps its whole data_s.zr onto DEST's
// data_{(s + base) % S}.zr as one contiguous run, at an offset that is the sum of the
// earlier parts' runs in that shard, and its RecordLoc entries, offsets shifted by that
// amount, land at 4096 + 16 * base in DEST's meta.zr. Every part's bytes have a fixed
// place, disjoint from every other part's, so the parts can be placed in any order, by
// different processes on different machines, and a part placed twice lands the same
// bytes twice.
//
// One process:
//   ZREC_RETURN_IF_ERROR(zrec::join_stores({a.get(), b.get()}, "all/", false, {}, &stats, ctx));
// A scheduler, in separate processes that share a file system:
//   zrec::plan_join({"p0/", "p1/"}, "all/", "all.plan", {}, ctx);   // once
//   zrec::place_join_part("all.plan", k, {}, &stats, ctx);          // for each part k, anywhere
//   zrec::publish_join("all.plan", {}, ctx);                        // once, after every part
// Each step runs in its Context (zrec/context.h): cancelled between windows
// (kCancelled "interrupted"), with progress from the calling thread after every window
// (the records placed so far and their logical bytes, no totals; the rest of JoinStats
// is the result, in *stats); its lock waits; its lanes check frames (read_stored) and
// copy runs (null: each part's own); what it leaves in place (a leftover temporary that
// is not provably zrec's) is said to its warning sink.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/status.h"
#include "zrec/store.h"

namespace zrec {

// What the layout needs of a part: its length and the tails of its S data files.
struct JoinPartShape {
  uint64_t length = 0;
  std::vector<uint64_t> tails;  // S entries
};

// Where one part goes in DEST.
struct JoinPartPlace {
  uint64_t base = 0;             // DEST's ID of the part's record 0: the table at 4096 + 16 * base
  std::vector<uint64_t> offset;  // offset[s]: where the part's data_s.zr starts in DEST's data_{(s + base) % S}.zr
  uint32_t dest_shard(uint32_t s, uint32_t shards) const { return static_cast<uint32_t>((s + base) % shards); }
};

struct JoinLayout {
  uint32_t shards = 0;
  uint64_t length = 0;          // DEST's length: the sum of the parts'
  std::vector<uint64_t> tails;  // DEST's tails (S entries)
  std::vector<JoinPartPlace> parts;
};

// Computes every part's place: bases are prefix sums of lengths; DEST shard d receives,
// part after part, the part shard s with (s + base) % S == d. kInvalidArgument when a
// shape has other than `shards` tails, or when a length, tail or the table's size
// (4096 + 16 * length) would overflow 64 bits.
Result<JoinLayout> join_layout(uint32_t shards, std::span<const JoinPartShape> parts);

// Why `parts` cannot be joined by placement, or "" when they can: the first one whose
// schema, codec, shard count, dictionary bytes or checksum setting (Store::checksum)
// differ from the first part's, e.g.
// "'b/' has 8 data files, 'a/' 4". (They can still be joined by frame copy or
// re-encoding: zrec/transfer.h.)
std::string placement_mismatch(const std::vector<const Store*>& parts);

struct JoinStats {
  uint64_t parts = 0;           // parts placed
  uint64_t records = 0;         // their records (every one checked as frame copy checks it)
  uint64_t logical_bytes = 0;   // their logic_length total
  uint64_t stored_bytes = 0;    // their stored bytes, now in DEST's data files
  uint64_t bytes_cloned = 0;    // of which shared with the part by a reflink (FICLONERANGE)
  uint64_t bytes_linked = 0;    // of which in a data file hard-linked from the first part
  uint64_t bytes_buffered = 0;  // of which copied through memory (copy_file_range refused)
  // The rest went kernel-side with copy_file_range.
};

struct JoinOptions {
  // join_stores() only: DEST's data files start as hard links to the first part's
  // instead of copies of them (that part is consumed: the caller holds the parts for
  // removal from the start, ConsumedStore, and removes them afterwards). The first part stays a valid store throughout:
  // the other parts' bytes land past its tails, where they are leftovers to it. Falls back to copying where the file
  // system refuses the link (another file system, no hard links).
  bool link_first = false;
};

// Builds DEST from `parts`, in order, in one process: checks that placement_mismatch()
// is "", creates DEST in a temporary sibling ".NAME.zrec-tmp-XXXXXX" (locked, marked:
// create's), places every part, writes the static page and renames the directory into
// place, exactly as build_from_stores publishes (zrec/transfer.h). DEST must not exist.
// The result equals build_from_stores' with frames copied (the same records, static
// page and dictionary; the same bytes wherever each part's records lie in its data
// files in ID order, as zrec's writers leave them). `checksum`: whether an empty DEST
// keeps the checksum marker (CreateOptions::checksum). On any error nothing is at DEST.
Status join_stores(const std::vector<Store*>& parts, const std::string& dst, bool checksum, const JoinOptions& options,
                   JoinStats* stats, const Context& ctx = {});

// --- the same join in steps, for a scheduler (docs/scale-out.md "Joining in parallel") ---

// A join plan as a step reads it.
struct JoinPlanInfo {
  std::string plan;                // the plan file
  std::string dest;                // DEST, absolute
  std::string temp;                // the temporary sibling DEST is built in, absolute (gone once published)
  std::vector<std::string> parts;  // the parts, absolute, in order
  JoinLayout layout;
  std::vector<bool> placed;  // per part: its placement finished (all true once published)
  bool published = false;    // DEST is in place (the temporary is gone)
  bool reused = false;       // plan_join(): the plan existed already and still fits
};

// Makes the plan: opens every part (shared lock, released before returning), checks
// placement_mismatch(), computes the layout, creates DEST's temporary sibling
// ".NAME.zrec-join-XXXXXX" with its marker, meta.zr, dict.zr and data files at their
// final sizes, and then writes the plan file `plan` (atomically: no half-written plan is
// ever at that name). DEST must not exist. If `plan` exists already and was made for the
// same parts (same lengths, tails, schema, codec, dictionary) and DEST, it is kept
// (reused = true), so a requeued planning job does nothing twice; a plan for anything
// else is kAlreadyExists. Abandoned temporaries of DEST (their plan gone) are removed
// first, as create removes its own (store/temp_files.h).
Result<JoinPlanInfo> plan_join(const std::vector<std::string>& parts, const std::string& dst, const std::string& plan,
                               const JoinOptions& options, const Context& ctx = {});

// Reads a plan file and the state of its join (which parts are placed, whether DEST is
// published). kMalformed for a file that is not a plan.
Result<JoinPlanInfo> read_join_plan(const std::string& plan);

// Places part `k`: opens it (shared lock), checks that it is still what the plan saw,
// checks every record as frame copy does (locations, overlaps, every zstd frame decoded),
// writes its shifted RecordLoc entries and copies each of its data files into its run
// (FICLONERANGE where the file system shares extents and the run starts on a block
// boundary, else copy_file_range), syncs, and only then writes the part's placement
// marker. Placing a part again writes the same bytes (after a crash, a kill, a requeue).
// Steps hold the temporary's meta.zr lock shared, so placements run at once; publish
// holds it exclusively. A join already published: OK, nothing done (stats->parts 0).
Status place_join_part(const std::string& plan, uint64_t k, const JoinOptions& options, JoinStats* stats,
                       const Context& ctx = {});

// Publishes DEST once every part is placed (kInvalidArgument naming the parts that are
// not): syncs, writes the static page, removes the markers and renames the temporary to
// DEST (renameat2 RENAME_NOREPLACE), then syncs the parent directory, as build_store
// does. Publishing again after a crash or a requeue finishes the same publication;
// once DEST is in place it is OK and does nothing (`*already` = true).
Status publish_join(const std::string& plan, const JoinOptions& options, const Context& ctx = {},
                    bool* already = nullptr);

// Removes the plan's temporary (its files only: store files and markers) and then the
// plan file. Never touches DEST or the parts. A plan whose DEST is published loses its
// plan file only.
Status discard_join(const std::string& plan, const JoinOptions& options, const Context& ctx = {});

// A store held for removal: the parts a join consumes. lock() takes the store's lock
// exclusively (kBusy if anyone holds it, unless ctx.wait) and keeps it, so that from then
// on no writer changes the store, nor the data files that join_stores() hard-linked
// from it into DEST (JoinOptions::link_first), until remove() unlinks meta.zr (from then
// on the directory is no longer a store), dict.zr and data_N.zr, and removes the
// directory, which must then be empty (kInvalidArgument naming a file that is not the
// store's, which is left with the directory). While it is held, this process opens the
// store with Context::snapshot_if_busy and `wait` false (its own lock is the one held).
class ConsumedStore {
 public:
  static Result<std::unique_ptr<ConsumedStore>> lock(const std::string& path, const Context& ctx = {});
  Status remove();
  ~ConsumedStore();

 private:
  ConsumedStore() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ConsumedStore::lock(path, ctx), then remove().
Status remove_store(const std::string& path, const Context& ctx = {});

}  // namespace zrec
