// zrec concat: one store holding the records of several, one after another. How a
// build scales out: parts built in parallel by any scheduler, then concatenated, in
// one process or in steps a scheduler runs on many machines (--plan, --place,
// --publish: zrec/join.h).
#include <sys/stat.h>

#include <set>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/join.h"

#include "cli/app/command.h"
#include "cli/formats/path_name.h"
#include "cli/formats/printable.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/os/output_guard.h"
#include "cli/os/side_file.h"
#include "cli/report/byte_size.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "cli/roots/root_transfer.h"
#include "cli/transfer_command.h"

namespace zrec::cli {

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(strip_trailing_slashes(path).c_str(), &st) == 0;
}

// SRC... DST, as cp takes them. Until the next release the old order DST SRC... still
// works, but only where it cannot mean anything else: the first argument does not exist
// and the last one is a store. Read in the new order, such a call could only fail (its
// DST exists and its first SRC does not), so no call that works in the new order ever
// changes meaning. Everywhere else the new order applies.
Status split_stores(const std::vector<std::string>& stores, TransferArgs& args) {
  if (stores.size() < 2) throw UsageError("give the stores to join and then the store to create: SRC... DST");
  const bool old_order = !exists(stores.front()) && is_store_dir(stores.back());
  if (old_order) {
    args.dst = stores.front();
    args.sources.assign(stores.begin() + 1, stores.end());
    spdlog::warn(
        "the order 'concat DST SRC...' is deprecated and will stop working in the next release; "
        "write 'zrec concat SRC... DST' (this call creates '{}')",
        printable(args.dst));
  } else {
    args.dst = stores.back();
    args.sources.assign(stores.begin(), stores.end() - 1);
  }
  return Status::ok();
}

// The join in steps: which step, and its plan file.
struct StepArgs {
  std::string plan;      // --plan PLAN
  int64_t place = -1;    // --place K
  bool publish = false;  // --publish
  bool discard = false;  // --discard
};

Status cancelled_step(const Status& s, const std::string& what) {
  if (s.code() == StatusCode::kCancelled) return cancelled("interrupted; " + what);
  return s;
}

// zrec concat --plan PLAN SRC... DST
Status run_plan(const StepArgs& step, const TransferArgs& a, const GlobalOptions& g) {
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.dst, "DST", a.sources));
  // The plan is a file of its own: inside a source store it would be one more file in it.
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(step.plan, "--plan", a.sources));
  ZREC_RETURN_IF_ERROR(check_side_file(step.plan, "--plan"));  // an existing plan is read back
  CommandReport report("concat", g, a.json);
  ZREC_ASSIGN_OR_RETURN(JoinPlanInfo info, plan_join(a.sources, a.dst, step.plan, {}, g.context(Work::kRead)));
  uint64_t stored = 0, placed = 0;
  for (uint64_t t : info.layout.tails) stored += t;
  for (bool p : info.placed) placed += p ? 1 : 0;
  const uint64_t n = info.parts.size();
  report.set("plan", step.plan).set("path", info.dest).set("temp", info.temp).set("sources", info.parts);
  report.set("parts", n).set("length", info.layout.length).set("shards", uint64_t{info.layout.shards});
  report.set("stored_bytes", stored).set("reused", info.reused).set("parts_placed", placed);
  report.set("published", info.published);
  const std::string next = fmt::format(
      "place each part with 'zrec concat --place K {}' (K = 0..{}), then 'zrec "
      "concat --publish {}'",
      printable(step.plan), n - 1, printable(step.plan));
  if (info.reused)
    return report.finish(fmt::format("the plan '{}' exists already for these parts: {} of {} placed{}; {}",
                                     printable(step.plan), placed, n, info.published ? ", published" : "", next));
  return report.finish(fmt::format("planned '{}' from {} parts ({} records, {} shard{}, {} stored) in '{}'; {}",
                                   printable(info.dest), n, info.layout.length, info.layout.shards,
                                   info.layout.shards == 1 ? "" : "s", format_mib(stored), printable(info.temp), next));
}

// zrec concat --place K PLAN
Status run_place(const StepArgs& step, const std::string& plan, bool json, const GlobalOptions& g) {
  InterruptScope interrupt_scope;
  CommandReport report("concat", g, json);
  ZREC_ASSIGN_OR_RETURN(JoinPlanInfo info, read_join_plan(plan));
  const auto k = static_cast<uint64_t>(step.place);
  JoinStats stats;
  const auto started = report.elapsed_s();
  ZREC_RETURN_IF_ERROR(cancelled_step(place_join_part(plan, k, {}, &stats, g.context(Work::kRead)),
                                      "part " + std::to_string(k) + " is not placed (place it again)"));
  const double secs = report.elapsed_s() - started;
  const bool nothing = stats.parts == 0;  // published already
  report.set("plan", plan).set("part", k).set("source", k < info.parts.size() ? info.parts[k] : "");
  report.set("length", stats.records).set("logical_bytes", stats.logical_bytes);
  report.set("stored_bytes", stats.stored_bytes).set("bytes_cloned", stats.bytes_cloned);
  report.set("published", nothing);
  if (nothing)
    return report.finish(fmt::format("the join of '{}' is published already; nothing to place", printable(info.dest)));
  return report.finish(
      fmt::format("placed part {} of {} ('{}'): {} records, {} stored ({} cloned); {:.2f} s, {:.1f} "
                  "MiB/s",
                  k, info.parts.size(), printable(info.parts[k]), stats.records, format_mib(stats.stored_bytes),
                  format_mib(stats.bytes_cloned), secs, secs > 0 ? stats.stored_bytes / 1048576.0 / secs : 0.0));
}

// zrec concat --publish PLAN
Status run_publish(const std::string& plan, bool json, const GlobalOptions& g) {
  InterruptScope interrupt_scope;
  CommandReport report("concat", g, json);
  ZREC_ASSIGN_OR_RETURN(JoinPlanInfo info, read_join_plan(plan));
  bool already = false;
  ZREC_RETURN_IF_ERROR(publish_join(plan, {}, g.context(Work::kRead), &already));
  report.set("plan", plan).set("path", info.dest).set("parts", uint64_t{info.parts.size()});
  report.set("length", info.layout.length).set("published", already);
  if (already) return report.finish(fmt::format("'{}' was published already", printable(info.dest)));
  return report.finish(fmt::format("published '{}': {} records from {} parts", printable(info.dest), info.layout.length,
                                   info.parts.size()));
}

// zrec concat --discard PLAN
Status run_discard(const std::string& plan, bool json, const GlobalOptions& g) {
  CommandReport report("concat", g, json);
  ZREC_ASSIGN_OR_RETURN(JoinPlanInfo info, read_join_plan(plan));
  ZREC_RETURN_IF_ERROR(discard_join(plan, {}, g.context(Work::kRead)));
  report.set("plan", plan).set("temp", info.temp).set("published", info.published);
  if (info.published)
    return report.finish(
        fmt::format("removed the plan '{}' ('{}' was published and stays)", printable(plan), printable(info.dest)));
  return report.finish(
      fmt::format("removed the plan '{}' and its temporary '{}'", printable(plan), printable(info.temp)));
}

// The sources of --consume, each once (a store given twice would be removed twice).
void refuse_repeated_sources(const std::vector<std::string>& sources) {
  std::set<std::pair<dev_t, ino_t>> seen;
  for (const auto& path : sources) {
    struct stat st;
    if (::stat(path.c_str(), &st) == 0 && !seen.insert({st.st_dev, st.st_ino}).second)
      throw UsageError("--consume removes the sources, and '" + path + "' is given twice");
  }
}

}  // namespace

Command register_concat(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<TransferArgs>();
  auto step = std::make_shared<StepArgs>();
  auto stores = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = root.add_subcommand("concat", "Join stores into a new one: SRC1's records, then SRC2's, ...");
  cmd->add_option(
         "stores", *stores,
         "Stores to read, in order (SRC...; identical schemas), then the store to create (DST; must not exist); "
         "or roots of the same streams, then the root to create")
      ->required();
  add_transfer_options(cmd, *args);
  add_stream_codec_option(cmd, args->stream_codecs);
  cmd->add_flag("--consume", args->consume,
                "Remove the sources once DST is in place (they are locked as a writer locks them until then); "
                "with parts that are joined by placement, DST's data files start as hard links to the first "
                "source's instead of copies");
  cmd->add_flag("--frame-copy", args->frame_copy,
                "Copy frame by frame (through the append engine) even where the sources could be placed as "
                "whole runs; the same store, for comparison");
  cmd->add_option("--plan", step->plan,
                  "Join in steps: check the sources, write the plan PLAN and DST's hidden temporary, and stop "
                  "(then --place K and --publish, each in any process that sees the same files)");
  cmd->add_option("--place", step->place,
                  "Place part K (0-based) of the plan given as the one operand, PLAN; again after a failure "
                  "or kill: it writes the same bytes")
      ->check(CLI::Validator(
          [](const std::string& text) {
            // Not CLI::NonNegativeNumber, whose message prints DBL_MAX's 310 digits.
            return text.empty() || text.front() == '-' ? "'" + text + "' is not a non-negative integer" : std::string();
          },
          "K"));
  cmd->add_flag("--publish", step->publish,
                "Publish the plan PLAN's DST once every part is placed: static page, then the rename into place");
  cmd->add_flag("--discard", step->discard, "Remove the plan PLAN and its temporary (never DST or the sources)");
  return Command{
      cmd, [cmd, args, step, stores, &global]() {
        const int steps = (!step->plan.empty()) + (step->place >= 0) + step->publish + step->discard;
        if (steps > 1) throw UsageError("give one of --plan, --place, --publish and --discard");
        if (steps == 1) {
          for (const char* opt : {"--codec", "--dict", "--tier", "--samples", "--seed", "--shards", "--level",
                                  "--window-mib", "--checksum", "--consume", "--frame-copy", "--stream-codec"})
            if (cmd->count(opt) > 0)
              throw UsageError(std::string(opt) +
                               " is not for a join in steps: it keeps the parts' own codec, dictionary "
                               "and shard count");
        }
        if (!step->plan.empty()) {
          ZREC_RETURN_IF_ERROR(split_stores(*stores, *args));
          return run_plan(*step, *args, global);
        }
        if (steps == 1) {
          if (stores->size() != 1) throw UsageError("--place, --publish and --discard take one operand, the plan file");
          const std::string& plan = stores->front();
          ZREC_RETURN_IF_ERROR(check_side_file(plan, "PLAN"));
          if (step->place >= 0) return run_place(*step, plan, args->json, global);
          if (step->publish) return run_publish(plan, args->json, global);
          return run_discard(plan, args->json, global);
        }
        ZREC_RETURN_IF_ERROR(split_stores(*stores, *args));
        if (any_root(args->sources, global)) {
          if (args->frame_copy) throw UsageError("--frame-copy is for stores, not roots");
          return run_root_transfer("concat", root_transfer_args(*args), global);
        }
        if (args->consume) refuse_repeated_sources(args->sources);
        return run_transfer("concat", *args, global);
      }};
}

}  // namespace zrec::cli
