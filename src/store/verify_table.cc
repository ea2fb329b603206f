// verify_store()'s table pass: every RecordLoc against the table rules, and each data
// file's records followed in ID order for the overlap check (verifier.h).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "store/verifier.h"

namespace zrec::store::verifying {

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
Status Verifier::table_pass() {
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
  return sweep_unordered(unordered, per_shard);
}

}  // namespace zrec::store::verifying
