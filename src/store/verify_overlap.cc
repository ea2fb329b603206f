// verify_store()'s overlap sweep: the records of each data file in offset order,
// reporting the ones that overlap and the bytes no record covers (verifier.h).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/verifier.h"

namespace zrec::store::verifying {

// The unordered shards (`unordered`), in groups whose entries fit the budget
// (overlap_memory; at least one shard each), each group's entries gathered in one walk
// of the table and sorted; a shard alone larger than the budget in several walks.
Status Verifier::sweep_unordered(const std::vector<uint32_t>& unordered, const std::vector<uint64_t>& per_shard) {
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

// A shard with more records than the budget: passes, each keeping the budget's worth
// of the smallest (offset, index) keys past the last pass's (a max-heap of at most
// `budget` entries), swept in order with the sweep's state carried across passes.
Status Verifier::sweep_large_shard(uint32_t shard, uint64_t budget) {
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

void Verifier::Sweep::run(Verifier& v, uint32_t shard, const std::vector<OverlapEntry>& sorted) {
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

void Verifier::Sweep::finish(Verifier& v, uint32_t shard) const {
  const uint64_t tail = v.files_.page.tails[shard];
  if (covered < tail)
    v.rep_.notes.push_back(file_of(shard) + ": " + std::to_string(tail - covered) + " of the " + std::to_string(tail) +
                           " bytes below its tail belong to no record (tolerated; a correct writer leaves none)");
}

}  // namespace zrec::store::verifying
