// The words for a root's alignment, for info and verify (root_problems.h).
#include "cli/roots/root_problems.h"

#include <fmt/format.h>

#include "cli/formats/printable.h"

namespace zrec::cli {

std::vector<RootProblem> root_problems(const Dataset& ds, const std::map<std::string, uint64_t>& lengths) {
  std::vector<RootProblem> out;
  const std::string committed = std::to_string(ds.length());
  for (const StreamProblem& p : ds.problems(lengths)) {
    const std::string records = p.length ? std::to_string(*p.length) : std::string();
    switch (p.kind) {
      case StreamProblem::Kind::kLayout:
        out.push_back({"root_streams", p.why});
        break;
      case StreamProblem::Kind::kMissing:
        out.push_back({"root_streams", "stream '" + printable(p.stream) + "' is listed in " + kRootMarkerFile +
                                           " but is not a store in the root"});
        break;
      case StreamProblem::Kind::kShort:
        out.push_back({"root_length", "stream '" + printable(p.stream) + "' holds " + records +
                                          " records, fewer than the " + committed + " samples the root committed"});
        break;
      case StreamProblem::Kind::kLong:
        out.push_back({"root_length", "stream '" + printable(p.stream) + "' holds " + records +
                                          " records, more than the " + committed +
                                          " samples the root committed (an append to the root was killed before "
                                          "its commit; the root's next writer continues from sample " +
                                          committed + ")"});
        break;
      case StreamProblem::Kind::kUnlisted:
        break;  // a note, not a problem of the root
    }
  }
  return out;
}

std::vector<RootNote> unadopted_notes(const Dataset& ds, const std::map<std::string, uint64_t>& lengths) {
  std::vector<RootNote> out;
  const std::string committed = std::to_string(ds.length());
  for (const StreamProblem& p : ds.problems(lengths)) {
    if (p.kind != StreamProblem::Kind::kUnlisted) continue;
    std::string text = "'" + printable(p.stream) + "' is not committed yet: " + kRootMarkerFile + " does not list it";
    if (p.length && *p.length != ds.length())
      text += ", and it holds " + std::to_string(*p.length) + " records where the root committed " + committed +
              " samples (zrec adopt '" + printable(ds.root()) + "' takes a store of one record per sample)";
    else text += " (zrec adopt '" + printable(ds.root()) + "' makes it a stream)";
    out.push_back({p.stream, std::move(text)});
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
