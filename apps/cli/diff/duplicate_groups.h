// The walk of `zrec duplicates`: a store's (or a root's) samples grouped by the content
// of one stream. Each sample becomes an entry led by that stream's record hash
// (sample_entries.h), the entries are sorted externally, and a run of equal leads is a
// group of identical records; the other streams' hashes in it tell where the group
// disagrees (two copies of one image with different labels). Memory is the sort's run
// buffer, disk some 24 + 16 * streams bytes a sample, whatever the length.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "zrec/status.h"

#include "cli/diff/diff_side.h"
#include "cli/diff/diff_walk.h"

namespace zrec::cli {

struct DuplicateGroup {
  std::vector<uint64_t> ids;        // two or more, ascending
  std::vector<std::string> differ;  // of WalkOptions::streams, those not the same in every member
};

// Calls `group` for every group of samples of `side` whose records of stream `by` are
// identical (in the order of their content hashes), comparing options.streams within
// each.
Status find_duplicates(const DiffSide& side, const std::string& by, const WalkOptions& options,
                       const std::function<Status(DuplicateGroup&&)>& group);

}  // namespace zrec::cli
