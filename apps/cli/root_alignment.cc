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
      out.push_back(
          {"root_length", "stream '" + printable(name) + "' holds " + std::to_string(it->second) +
                              " records, more than the " + committed +
                              " samples the root committed (an append to the root was killed before its commit; "
                              "the root's next writer continues from sample " +
                              committed + ")"});
  }
  return out;
}

std::vector<RootNote> unadopted_stores(const std::string& root, const RootState& state,
                                       const std::vector<std::string>& stores,
                                       const std::map<std::string, uint64_t>& lengths) {
  std::vector<RootNote> out;
  const std::string committed = std::to_string(state.length);
  for (const auto& name : stores) {
    if (std::binary_search(state.streams.begin(), state.streams.end(), name)) continue;
    auto it = lengths.find(name);
    // An empty store while nothing is committed: a stream a killed first run created.
    if (state.length == 0 && it != lengths.end() && it->second == 0) continue;
    std::string text = "'" + printable(name) + "' is not committed yet: " + kRootMarkerFile + " does not list it";
    if (it != lengths.end() && it->second != state.length)
      text += ", and it holds " + std::to_string(it->second) + " records where the root committed " + committed +
              " samples (zrec adopt '" + printable(root) + "' takes a store of one record per sample)";
    else text += " (zrec adopt '" + printable(root) + "' makes it a stream)";
    out.push_back({name, std::move(text)});
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
