// zrec duplicates: groups of samples whose records of one stream are identical (by
// content hash, in bounded memory: cli/diff/duplicate_groups.h), where the other
// streams of a root disagree within a group (the same image under two labels), and a
// drop list that `cat --exclude-from` and `recompress --exclude-from` apply.
#include <algorithm>
#include <map>
#include <queue>

#include <CLI/CLI.hpp>

#include "zrec/dataset.h"
#include "zrec/remote.h"

#include "cli/app/command.h"
#include "cli/diff/diff_side.h"
#include "cli/diff/duplicate_groups.h"
#include "cli/formats/printable.h"
#include "cli/options/json_option.h"
#include "cli/options/option_choices.h"
#include "cli/options/temp_dir_option.h"
#include "cli/options/usage_error.h"
#include "cli/options/window_option.h"
#include "cli/os/interrupt.h"
#include "cli/os/output_guard.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "cli/report/json.h"

namespace zrec::cli {

namespace {

struct DuplicatesArgs {
  std::string path;
  std::string by;  // --by STREAM; "": a store's records, or a root's one stream besides __key__
  std::string keep = "first";
  std::string drop_list;  // --drop-list FILE
  bool force = false;
  uint64_t max_shown = 10;
  bool json = false;
  std::string temp_dir;
  uint64_t window_mib = 8;
};

// What the walk found, gathered group by group (they come in content-hash order).
class DuplicateReport {
 public:
  DuplicateReport(size_t max_shown, bool keep_groups, bool keep_first, bool keep_drops)
      : max_shown_(max_shown), keep_groups_(keep_groups), keep_first_(keep_first), keep_drops_(keep_drops) {}

  void add(DuplicateGroup&& g) {
    ++groups_;
    samples_ += g.ids.size();
    if (!g.differ.empty()) ++conflicting_;
    for (const std::string& s : g.differ) ++by_stream_[s];
    if (keep_drops_) {
      const size_t kept = keep_first_ ? 0 : g.ids.size() - 1;
      for (size_t k = 0; k < g.ids.size(); ++k)
        if (k != kept) drops_.push_back(g.ids[k]);
    }
    if (max_shown_ > 0 && (shown_.size() < max_shown_ || g.ids.front() < shown_.top().ids.front())) {
      shown_.push(g);
      if (shown_.size() > max_shown_) shown_.pop();
    }
    if (keep_groups_) all_.push_back(std::move(g));
  }

  uint64_t groups() const { return groups_; }
  uint64_t samples() const { return samples_; }
  uint64_t dropped() const { return samples_ - groups_; }
  uint64_t conflicting() const { return conflicting_; }
  const std::map<std::string, uint64_t>& by_stream() const { return by_stream_; }

  // The first max_shown groups by their lowest ID.
  std::vector<DuplicateGroup> shown() {
    std::vector<DuplicateGroup> out;
    for (; !shown_.empty(); shown_.pop()) out.push_back(shown_.top());
    std::reverse(out.begin(), out.end());
    return out;
  }
  // With keep_groups: every group, by its lowest ID.
  std::vector<DuplicateGroup>& all() {
    std::sort(all_.begin(), all_.end(),
              [](const DuplicateGroup& a, const DuplicateGroup& b) { return a.ids.front() < b.ids.front(); });
    return all_;
  }
  // With keep_drops: the IDs to drop, ascending.
  std::vector<uint64_t>& drops() {
    std::sort(drops_.begin(), drops_.end());
    return drops_;
  }

 private:
  struct LaterFirst {
    bool operator()(const DuplicateGroup& a, const DuplicateGroup& b) const { return a.ids.front() < b.ids.front(); }
  };
  const size_t max_shown_;
  const bool keep_groups_, keep_first_, keep_drops_;
  uint64_t groups_ = 0, samples_ = 0, conflicting_ = 0;
  std::map<std::string, uint64_t> by_stream_;
  std::priority_queue<DuplicateGroup, std::vector<DuplicateGroup>, LaterFirst> shown_;  // the top is the latest
  std::vector<DuplicateGroup> all_;
  std::vector<uint64_t> drops_;
};

// The stream samples are grouped by: --by, or a store's records, or a root's one stream
// besides __key__.
std::string grouped_stream(const DuplicatesArgs& a, const DiffSide& side) {
  if (!side.root) {
    if (!a.by.empty())
      throw UsageError("--by names a stream of a root, and '" + redact_url(side.path) + "' is a store");
    return kStoreStream;
  }
  std::vector<std::string> candidates;
  for (const DiffStream& s : side.streams)
    if (s.name != kKeyStream) candidates.push_back(s.name);
  std::string names;
  for (const std::string& s : candidates) names += (names.empty() ? "" : ", ") + s;
  if (!a.by.empty()) {
    if (a.by == kKeyStream)
      throw UsageError("--by " + a.by + ": keys are meant to differ; group by a stream of content (" + names + ")");
    if (side.find(a.by) == nullptr)
      throw UsageError("--by " + a.by + ": root '" + redact_url(side.path) + "' has no such stream (it has " + names +
                       ")");
    return a.by;
  }
  if (candidates.size() != 1)
    throw UsageError("root '" + redact_url(side.path) + "' has " + std::to_string(candidates.size()) +
                     " streams: name the one whose records must be unique with --by (" + names + ")");
  return candidates.front();
}

std::string group_line(const DuplicateGroup& g, const DiffSide& side) {
  std::string t = "group of " + std::to_string(g.ids.size()) + ":";
  for (size_t k = 0; k < g.ids.size(); ++k)
    t += (k ? ", " : " ") + std::to_string(g.ids[k]) + sample_key_words(side, g.ids[k]);
  if (!g.differ.empty()) {
    std::string streams;
    for (const std::string& s : g.differ) streams += (streams.empty() ? "" : ",") + s;
    t += "; differ in " + streams;
  }
  return t + "\n";
}

std::string summary_text(const DuplicatesArgs& a, const DiffSide& side, const std::string& by, DuplicateReport& found) {
  std::string t = "by '" + printable(by) + "' of '" + printable(redact_url(side.path)) +
                  "': " + std::to_string(side.length) + " samples, " + std::to_string(found.groups()) +
                  " groups of identical records holding " + std::to_string(found.samples()) + " samples (" +
                  std::to_string(found.dropped()) + " to drop keeping the " + a.keep + " of each)\n";
  if (side.root) {
    t += "groups whose other streams differ: " + std::to_string(found.conflicting());
    for (const auto& [name, n] : found.by_stream())
      t += (name == found.by_stream().begin()->first ? " (" : ", ") + printable(name) + " " + std::to_string(n);
    t += found.by_stream().empty() ? "\n" : ")\n";
  }
  const std::vector<DuplicateGroup> shown = found.shown();
  for (const DuplicateGroup& g : shown) t += group_line(g, side);
  if (shown.size() < found.groups())
    t += "... " + std::to_string(found.groups() - shown.size()) + " more groups (--max-shown N, or --json for all)\n";
  return t;
}

std::string groups_json(std::vector<DuplicateGroup>& groups) {
  JsonWriter j;
  j.begin_array();
  for (const DuplicateGroup& g : groups) {
    j.begin_object().key("ids").begin_array();
    for (uint64_t id : g.ids) j.value(id);
    j.end_array().key("differ").begin_array();
    for (const std::string& s : g.differ) j.value(s);
    j.end_array().end_object();
  }
  j.end_array();
  return j.str();
}

Status write_drop_list(const DuplicatesArgs& a, std::vector<uint64_t>& drops) {
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open(a.drop_list, "--drop-list", a.force));
  std::string line;
  for (uint64_t id : drops) {
    line = std::to_string(id);
    line += '\n';
    ZREC_RETURN_IF_ERROR(out.write(line));
  }
  return out.flush();
}

Status run_duplicates(const DuplicatesArgs& a, const GlobalOptions& g) {
  const bool keep_first = choose(keep_names(), "--keep", a.keep) == 0;
  InterruptScope interrupt_scope;
  if (!a.drop_list.empty()) {
    if (a.drop_list == "-") throw UsageError("--drop-list writes a file: stdout holds the groups");
    ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.drop_list, "--drop-list", {a.path}));
    ZREC_RETURN_IF_ERROR(refuse_existing_output(a.drop_list, "--drop-list", a.force));
  }
  Context ctx = g.read_context(a.path);
  ctx.snapshot_if_busy = !g.wait;
  ZREC_ASSIGN_OR_RETURN(const DiffSide side, open_diff_side(a.path, ctx));
  const std::string by = grouped_stream(a, side);
  WalkOptions walk;
  for (const DiffStream& s : side.streams)
    if (s.name != by && s.name != kKeyStream) walk.streams.push_back(s.name);
  walk.window_bytes = a.window_mib << 20;
  walk.temp_dir = a.temp_dir;
  walk.control.cancel = ctx.control.cancel;
  DuplicateReport found(a.json ? 0 : a.max_shown, a.json, keep_first, !a.drop_list.empty());
  ZREC_RETURN_IF_ERROR(find_duplicates(side, by, walk, [&](DuplicateGroup&& group) {
    found.add(std::move(group));
    return Status::ok();
  }));
  if (!a.drop_list.empty()) ZREC_RETURN_IF_ERROR(write_drop_list(a, found.drops()));
  CommandReport report("duplicates", g, a.json);
  if (a.json) {
    JsonFacts by_stream;
    for (const auto& [name, n] : found.by_stream()) by_stream.set(name, n);
    report.set("path", redact_url(a.path)).set("root", side.root).set("by", by).set("length", side.length);
    report.set("group_count", found.groups()).set("duplicate_samples", found.samples());
    report.set("keep", a.keep).set("dropped", found.dropped());
    if (a.drop_list.empty()) report.set_null("drop_list");
    else report.set("drop_list", a.drop_list);
    report.set("conflicting_groups", found.conflicting()).set_json("conflicts_by_stream", by_stream.object());
    report.set_json("groups", groups_json(found.all()));
  } else {
    ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));
    ZREC_RETURN_IF_ERROR(out.write(summary_text(a, side, by, found)));
    ZREC_RETURN_IF_ERROR(out.flush());
  }
  if (a.drop_list.empty()) return report.finish("");  // the groups are the output
  return report.finish("wrote " + std::to_string(found.dropped()) + " IDs to drop to '" + printable(a.drop_list) + "'");
}

}  // namespace

Command register_duplicates(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<DuplicatesArgs>();
  CLI::App* cmd = root.add_subcommand(
      "duplicates", "Find samples whose records are identical, where their other streams disagree, and what to drop");
  cmd->add_option("path", args->path, "The store or root (a path or URL)")->required();
  cmd->add_option("--by", args->by,
                  "The stream of a root whose records are compared (default: its one stream besides __key__)")
      ->type_name("STREAM");
  offer_choices(cmd->add_option("--keep", args->keep,
                                "Which sample of each group the drop list keeps: the lowest ID (first) or the highest")
                    ->capture_default_str(),
                keep_names());
  cmd->add_option("--drop-list", args->drop_list,
                  "Write the IDs of the other samples of every group, ascending, one per line (for cat and "
                  "recompress --exclude-from)")
      ->type_name("FILE");
  cmd->add_flag("-f,--force", args->force, "Replace an existing --drop-list file");
  cmd->add_option("--max-shown", args->max_shown, "Groups listed after the summary, lowest IDs first")
      ->capture_default_str();
  add_temp_dir_option(cmd, args->temp_dir, "Where the sort spills its runs");
  add_json_flag(cmd, args->json, "listing every group");
  add_window_mib_option(cmd, args->window_mib, "read window");
  return Command{cmd, [args, &global]() { return run_duplicates(*args, global); }};
}

}  // namespace zrec::cli
