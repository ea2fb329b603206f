// zrec diff: which samples two stores or roots (local or URLs) hold differently, by
// their records' content hashes, aligned by position or by the __key__ stream, in
// bounded memory (cli/diff/diff_walk.h). Exit status as cmp(1): 0 equal, 1 different,
// 2 trouble.
#include <algorithm>
#include <cstdio>
#include <set>

#include <CLI/CLI.hpp>

#include "zrec/dataset.h"
#include "zrec/remote.h"

#include "cli/app/app.h"
#include "cli/app/command.h"
#include "cli/diff/change_log.h"
#include "cli/diff/diff_side.h"
#include "cli/diff/diff_walk.h"
#include "cli/diff/entry_sort.h"
#include "cli/diff/keys_file_stream.h"
#include "cli/formats/printable.h"
#include "cli/options/json_option.h"
#include "cli/options/temp_dir_option.h"
#include "cli/options/usage_error.h"
#include "cli/options/window_option.h"
#include "cli/os/interrupt.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "cli/report/json.h"

namespace zrec::cli {

namespace {

struct DiffArgs {
  std::string a, b;
  bool by_key = false;
  std::string keys_a, keys_b;  // --keys-a/--keys-b: keys files standing in for __key__
  uint64_t max_shown = 10;
  bool json = false;
  std::string temp_dir;
  uint64_t window_mib = 8;  // two sides read in step: a smaller window than a lone read's
  bool different = false;   // set by the run, read by the exit code
};

std::vector<std::string> diff_stream_names(const DiffSide& side) {
  std::vector<std::string> out;
  for (const DiffStream& s : side.streams) out.push_back(s.name);
  return out;
}

std::vector<std::string> only_in(const DiffSide& x, const DiffSide& y) {
  std::vector<std::string> out;
  for (const DiffStream& s : x.streams)
    if (y.find(s.name) == nullptr) out.push_back(s.name);
  return out;
}

// The streams compared: those both sides hold, less the key stream when it aligns them.
std::vector<std::string> compared_streams(const DiffSide& a, const DiffSide& b, bool by_key) {
  std::vector<std::string> out;
  for (const DiffStream& s : a.streams)
    if (b.find(s.name) != nullptr && !(by_key && s.name == kKeyStream)) out.push_back(s.name);
  return out;
}

// One line per shown change: "- A 17 key 'k'", "+ B 5", "~ A 25 B 24 key 'k': label,jpg".
std::string change_line(const Change& c, const DiffSide& a, const DiffSide& b) {
  switch (c.kind) {
    case Change::Kind::kRemoved:
      return "- A " + std::to_string(c.a) + sample_key_words(a, c.a) + "\n";
    case Change::Kind::kAdded:
      return "+ B " + std::to_string(c.b) + sample_key_words(b, c.b) + "\n";
    case Change::Kind::kChanged:
      break;
  }
  std::string streams;
  for (const std::string& s : c.streams) streams += (streams.empty() ? "" : ",") + s;
  return "~ A " + std::to_string(c.a) + " B " + std::to_string(c.b) + sample_key_words(a, c.a) + ": " + streams + "\n";
}

std::string summary_text(const DiffArgs& args, const DiffSide& a, const DiffSide& b, ChangeLog& log) {
  const bool files = !args.keys_a.empty() || !args.keys_b.empty();
  std::string t = std::string("by ") +
                  (!args.by_key ? "position"
                   : files      ? "key (keys files)"
                                : "key (__key__)") +
                  ": A '" + printable(redact_url(a.path)) + "' " + std::to_string(a.length) + " samples, B '" +
                  printable(redact_url(b.path)) + "' " + std::to_string(b.length) + " samples\n";
  for (const std::string& s : only_in(a, b)) t += "stream only in A: " + s + "\n";
  for (const std::string& s : only_in(b, a)) t += "stream only in B: " + s + "\n";
  t += "removed " + std::to_string(log.removed()) + "\n";
  t += "added " + std::to_string(log.added()) + "\n";
  t += "changed " + std::to_string(log.changed()) + "\n";
  for (const auto& [name, n] : log.changed_by_stream()) t += "changed " + name + " " + std::to_string(n) + "\n";
  t += "unchanged " + std::to_string(log.unchanged()) + "\n";
  const std::vector<Change> shown = log.shown();
  for (const Change& c : shown) t += change_line(c, a, b);
  if (shown.size() < log.total())
    t += "... " + std::to_string(log.total() - shown.size()) + " more (--max-shown N, or --json for all)\n";
  return t;
}

std::string ranges_json(const std::vector<IdRange>& ranges) {
  JsonWriter j;
  j.begin_array();
  for (const IdRange& r : ranges) j.begin_array().value(r.start).value(r.stop).end_array();
  j.end_array();
  return j.str();
}

std::string side_json(const DiffSide& side) {
  JsonFacts f;
  f.set("path", redact_url(side.path))
      .set("root", side.root)
      .set("length", side.length)
      .set("streams", diff_stream_names(side));
  return f.object();
}

void set_json_facts(CommandReport& r, const DiffArgs& args, const DiffSide& a, const DiffSide& b, ChangeLog& log) {
  r.set("by", args.by_key ? "key" : "position").set_json("a", side_json(a)).set_json("b", side_json(b));
  r.set("equal", !args.different).set("streams_only_in_a", only_in(a, b)).set("streams_only_in_b", only_in(b, a));
  r.set("removed", log.removed()).set("added", log.added()).set("changed", log.changed());
  r.set("unchanged", log.unchanged());
  JsonFacts by_stream;
  for (const auto& [name, n] : log.changed_by_stream()) {
    JsonFacts s;
    s.set("changed", n).set_json("ids", ranges_json(log.stream_ranges(name)));
    by_stream.set_json(name, s.object());
  }
  r.set_json("changed_by_stream", by_stream.object());
  r.set_json("removed_ids", ranges_json(log.removed_ranges())).set_json("added_ids", ranges_json(log.added_ranges()));
  r.set_json("changed_ids", ranges_json(log.changed_ranges()));
}

Status run_diff(DiffArgs& args, const GlobalOptions& g) {
  InterruptScope interrupt_scope;
  const auto open = [&](const std::string& path) {
    Context ctx = g.read_context(path);
    ctx.snapshot_if_busy = !g.wait;
    return open_diff_side(path, ctx);
  };
  ZREC_ASSIGN_OR_RETURN(DiffSide a, open(args.a));
  ZREC_ASSIGN_OR_RETURN(DiffSide b, open(args.b));
  if (a.root != b.root)
    return invalid_argument("'" + redact_url(a.root ? b.path : a.path) + "' is a store and '" +
                            redact_url(a.root ? a.path : b.path) + "' a root: diff compares two of a kind");
  // Keys files stand in for a side's __key__ stream; the stores holding them live in a
  // scratch directory until the walk is done.
  std::unique_ptr<ScratchDir> keys_scratch;
  if (!args.keys_a.empty() || !args.keys_b.empty()) {
    args.by_key = true;
    ZREC_ASSIGN_OR_RETURN(keys_scratch, ScratchDir::make(args.temp_dir, "zrec-diff-keys-"));
    if (!args.keys_a.empty()) ZREC_RETURN_IF_ERROR(add_keys_file(a, args.keys_a, "--keys-a", keys_scratch->path()));
    if (!args.keys_b.empty()) ZREC_RETURN_IF_ERROR(add_keys_file(b, args.keys_b, "--keys-b", keys_scratch->path()));
  }
  if (args.by_key)
    for (const DiffSide* side : {&a, &b})
      if (side->find(kKeyStream) == nullptr)
        return invalid_argument("--by-key: '" + redact_url(side->path) + "' has no " + kKeyStream +
                                " stream (append-tar --keys-stream keeps one; --keys-a/--keys-b take a keys file)");
  WalkOptions walk;
  walk.streams = compared_streams(a, b, args.by_key);
  walk.window_bytes = args.window_mib << 20;
  walk.temp_dir = args.temp_dir;
  walk.control.cancel = g.transfer_context().control.cancel;  // (no executor: the sides have theirs)
  ChangeLog log(args.max_shown, args.json);
  ZREC_RETURN_IF_ERROR(args.by_key ? walk_by_key(a, b, kKeyStream, log, walk) : walk_by_position(a, b, log, walk));
  args.different = log.total() > 0 || !only_in(a, b).empty() || !only_in(b, a).empty();
  CommandReport report("diff", g, args.json);
  if (args.json) {
    set_json_facts(report, args, a, b, log);
  } else {
    ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));
    ZREC_RETURN_IF_ERROR(out.write(summary_text(args, a, b, log)));
    ZREC_RETURN_IF_ERROR(out.flush());
  }
  return report.finish("");  // the differences are the output
}

// cmp(1)'s codes: 0 equal, 1 different, 2 trouble (zrec's usual 1 would read as
// "different" to a script); 128+N on a signal.
int diff_exit_code(const Status& s, bool different) {
  if (s.is_ok()) return different ? kExitFailure : kExitOk;
  if (s.code() == StatusCode::kCancelled) return interrupt_exit_code();
  return kExitUsage;
}

}  // namespace

Command register_diff(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<DiffArgs>();
  CLI::App* cmd = root.add_subcommand("diff", "Compare two stores or roots record by record, by content");
  cmd->add_option("a", args->a, "The old store or root (a path or URL)")->required();
  cmd->add_option("b", args->b, "The new store or root (a path or URL)")->required();
  cmd->add_flag("--by-key", args->by_key,
                "Align samples by the roots' __key__ stream instead of by position (an external sort: memory "
                "bounded, disk about 24 + 16 * streams bytes a sample per side)");
  cmd->add_option("--keys-a", args->keys_a,
                  "Align by key (implies --by-key), A's keys read from FILE, one line per sample (as append-tar "
                  "--keys writes them), where A has no __key__ stream")
      ->type_name("FILE");
  cmd->add_option("--keys-b", args->keys_b, "The same for B: B's keys, one line per sample")->type_name("FILE");
  cmd->add_option("--max-shown", args->max_shown, "Changes listed after the summary, lowest IDs first")
      ->capture_default_str();
  add_temp_dir_option(cmd, args->temp_dir, "Where --by-key spills its sorted runs");
  add_json_flag(cmd, args->json, "listing every change as ranges of IDs");
  add_window_mib_option(cmd, args->window_mib, "read window");
  return Command{cmd, [args, &global]() { return run_diff(*args, global); },
                 [args](const Status& s) { return diff_exit_code(s, args->different); }, [] { return true; }};
}

}  // namespace zrec::cli
