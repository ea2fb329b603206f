// The one rule for whether the stores of a marked root line up with its committed
// samples (zrec::StreamProblem): zrec::Dataset reports what it finds, DatasetWriter
// refuses to open a root that breaks it. Not installed.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zrec/dataset.h"

namespace zrec::store {

// The problems of the root `root` whose marker holds `state` and which holds the stores
// `stores` (sorted names; child_stores), of which those in `lengths` hold that many
// records: kLayout for each store that check_root_stream refuses, then, for each listed
// stream in order, kMissing (no store, while state.length > 0), kShort or kLong (its
// length known and not state.length), then kUnlisted for each store the marker does not
// list, but an empty one while nothing is committed. Empty: the root lines up.
std::vector<StreamProblem> stream_alignment(const std::string& root, const RootState& state,
                                            const std::vector<std::string>& stores,
                                            const std::map<std::string, uint64_t>& lengths);

}  // namespace zrec::store
