// Roots and their alignment, for info and verify (root_alignment.h).
#include "cli/root_alignment.h"

#include <algorithm>

#include <fmt/format.h>

#include "cli/formats/printable.h"

namespace zrec::cli {

std::vector<RootProblem> root_problems(const std::string& root, const RootState& state,
                                       const std::vector<std::string>& stores,
                                       const std::map<std::string, uint64_t>& lengths) {
  std::vector<RootProblem> out;
  for (const auto& name : stores)
    if (Status s = check_root_stream(root, name); !s.is_ok()) out.push_back({"root_streams", s.message()});
  const std::string committed = std::to_string(state.length);
  for (const auto& name : state.streams) {
    if (std::find(stores.begin(), stores.end(), name) == stores.end()) {
      if (state.length > 0)
        out.push_back({"root_streams", "stream '" + printable(name) + "' is listed in " + kRootMarkerFile +
                                           " but is not a store in the root"});
      continue;
    }
    auto it = lengths.find(name);
    if (it == lengths.end() || it->second == state.length) continue;
    if (it->second < state.length)
      out.push_back({"root_length", "stream '" + printable(name) + "' holds " + std::to_string(it->second) +
                                        " records, fewer than the " + committed + " samples the root committed"});
    else
      out.push_back({"root_length", "stream '" + printable(name) + "' holds " + std::to_string(it->second) +
                                        " records, more than the " + committed +
                                        " samples the root committed (an append-tar run stopped before committing "
                                        "the root; the next append-tar into it continues from sample " +
                                        committed + ")"});
  }
  for (const auto& name : stores) {
    if (std::binary_search(state.streams.begin(), state.streams.end(), name)) continue;
    auto it = lengths.find(name);
    const bool empty = it != lengths.end() && it->second == 0;
    if (state.length == 0 && empty) continue;
    out.push_back({"root_streams", "'" + printable(name) + "' is a store in the root that " + kRootMarkerFile +
                                       " does not list (not one of its streams; zrec adopt makes it one when it "
                                       "holds a record per committed sample)"});
  }
  return out;
}

std::string unmarked_note(size_t stores) {
  // One format, not a chain of std::string operator+: GCC 12 at -O2 warned, falsely, that
  // the chain's inlined memcpy ran past a temporary string (-Warray-bounds) once this file
  // no longer had CLI11's header in its precompiled header.
  return fmt::format("not a root (no {} marker): its {} store{} unrelated, and their lengths are not compared",
                     kRootMarkerFile, stores, stores == 1 ? " is" : "s are");
}

}  // namespace zrec::cli
