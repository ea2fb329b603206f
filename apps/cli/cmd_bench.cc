// zrec bench: measure zrec on the loaderx benchmark workloads (or on an existing store),
// every figure beside baselines measured in the same run. Environment to stderr first,
// then results to stdout: Markdown tables, or one JSON object with --json.
#include <algorithm>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/app/command.h"
#include "cli/formats/printable.h"
#include "cli/options/codec_rules.h"
#include "cli/options/option_choices.h"
#include "cli/options/option_values.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/report/bench_export.h"
#include "cli/report/bench_report.h"
#include "cli/report/byte_size.h"
#include "cli/report/console.h"
#include "cli/report/json.h"
#include "zrec_bench.h"

namespace zrec::cli {

namespace {

struct BenchArgs {
  std::string store;
  std::vector<std::string> workloads;
  std::vector<std::string> codecs;
  uint64_t records = 0;
  std::string bytes;
  uint64_t batch = 0;
  std::string dir;
  std::string export_dir;
  bool json = false;
  bool cold = false;
  bool sync = false;
  bool keep = false;
  double seconds = 2.0;
  uint32_t rounds = 4;
  uint64_t seed = 1;
  uint32_t shards = 4;
};

// The options both kinds of run take the same way (bench::RunOptions and
// bench::StoreBenchOptions): cache state, timing, and the seed.
template <typename Options>
void set_measurement_options(Options& o, const BenchArgs& a) {
  o.cold = a.cold;
  o.seconds = a.seconds;
  o.rounds = a.rounds;
  o.seed = a.seed;
}

std::string comma_list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// The benchmark's progress: each phase as it starts, one info line each.
void log_phase(const Progress& p) {
  if (p.phase != nullptr) spdlog::info("{}", p.phase);
}

Status run_store_bench(const BenchArgs& a, const GlobalOptions& g, Output& out) {
  const BenchEnvironment env = collect_environment(g.threads);
  if (g.verbosity >= 0) std::fputs(environment_text(env, "the store's", a.cold).c_str(), stderr);
  bench::StoreBenchOptions o;
  o.batch = a.batch != 0 ? a.batch : 256;
  set_measurement_options(o, a);
  // SIGINT/SIGTERM end a --wait for the lock or the gathering at the next batch, exit 130/143.
  InterruptScope interrupts;
  Context ctx = g.context(Work::kRead);
  ctx.control.progress = log_phase;
  ZREC_ASSIGN_OR_RETURN(auto r, bench::bench_store(a.store, o, ctx));
  if (a.json) {
    JsonWriter j;
    j.begin_object();
    j.key("environment");
    environment_json(j, env);
    store_json(j, r);
    j.end_object();
    ZREC_RETURN_IF_ERROR(out.write(j.str() + "\n"));
  } else {
    ZREC_RETURN_IF_ERROR(out.write(store_text(r)));
  }
  return out.flush();
}

Status run_bench(const BenchArgs& a, const GlobalOptions& g) {
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));
  if (!a.store.empty()) {
    if (!a.workloads.empty() || !a.codecs.empty() || a.records != 0 || !a.bytes.empty() || !a.export_dir.empty())
      throw UsageError("--workload, --codec, --records, --bytes and --export build stores; they do not apply to STORE");
    return run_store_bench(a, g, out);
  }
  // Validate everything before any work.
  std::vector<bench::Workload> workloads;
  for (const auto& name : a.workloads) {
    auto w = bench::parse_workload(name);
    if (!w) throw UsageError("unknown workload '" + printable(name) + "' (use " + choice_list(workload_names()) + ")");
    workloads.push_back(*w);
  }
  if (workloads.empty()) workloads.assign(std::begin(bench::kAllWorkloads), std::end(bench::kAllWorkloads));
  bench::RunOptions o;
  if (!a.codecs.empty()) {
    o.codecs.clear();
    for (const auto& name : a.codecs) {
      const NewCodec c = parse_new_codec(name);
      if (c.automatic) o.codec_auto = true;
      else if (std::find(o.codecs.begin(), o.codecs.end(), c.codec) == o.codecs.end()) o.codecs.push_back(c.codec);
    }
  }
  if (a.records != 0 && !a.bytes.empty()) throw UsageError("--records and --bytes are mutually exclusive");
  uint64_t bytes = 0;
  if (!a.bytes.empty()) {
    ZREC_ASSIGN_OR_RETURN(bytes, parse_byte_size(a.bytes, "--bytes"));
    if (bytes == 0) throw UsageError("--bytes must be at least one record");
  }
  o.batch = a.batch;
  // The benchmark reports reads and writes each under its own budget (docs/format.md
  // §9), so it is the one command that states two: an executor for each.
  Context reading = g.context(Work::kRead);
  o.read_lanes = reading.lanes;
  o.write_lanes = g.context(Work::kWrite).lanes;
  o.dir = a.dir;
  o.keep = a.keep;
  o.sync = a.sync;
  o.data_shards = a.shards;
  set_measurement_options(o, a);

  std::vector<std::string> codec_names;
  for (Codec c : o.codecs) codec_names.push_back(to_string(c));
  if (o.codec_auto) codec_names.push_back(kAutoCodecName);
  const BenchEnvironment env = collect_environment(g.threads);
  if (g.verbosity >= 0) std::fputs(environment_text(env, comma_list(codec_names), a.cold).c_str(), stderr);

  JsonWriter j;
  if (a.json) {
    j.begin_object();
    j.key("environment");
    environment_json(j, env);
    j.key("options").begin_object();
    j.key("seconds").value(o.seconds);
    j.key("rounds").value(uint64_t{o.rounds});
    j.key("seed").value(o.seed);
    j.key("sync").value(o.sync);
    j.key("data_shards").value(uint64_t{o.data_shards});
    j.end_object();
    j.key("workloads").begin_array();
  }
  // SIGINT/SIGTERM stop the run at the next batch or phase; its temporary stores are
  // removed on the way out, and zrec exits 130/143.
  InterruptScope interrupts;
  reading.control.progress = log_phase;
  for (bench::Workload w : workloads) {
    if (interrupted()) return cancelled("interrupted");
    const auto d = bench::defaults(w);
    const uint64_t n = a.records != 0 ? a.records
                       : bytes != 0   ? std::max<uint64_t>(1, bytes / d.record_bytes)
                                      : d.records;
    spdlog::info("{}: generating {} records", bench::to_string(w), n);
    const bench::Corpus corpus = bench::generate(w, n, a.seed, *o.read_lanes);
    if (!a.export_dir.empty()) ZREC_RETURN_IF_ERROR(export_corpus(corpus, a.export_dir));
    ZREC_ASSIGN_OR_RETURN(auto r, bench::run_workload(o, corpus, reading));
    if (a.json) {
      workload_json(j, r);
    } else {
      ZREC_RETURN_IF_ERROR(out.write(workload_text(r)));
      ZREC_RETURN_IF_ERROR(out.flush());  // a long run shows each table as it completes
    }
  }
  if (a.json) {
    j.end_array().end_object();
    ZREC_RETURN_IF_ERROR(out.write(j.str() + "\n"));
  }
  return out.flush();
}

}  // namespace

Command register_bench(CLI::App& root, const GlobalOptions& global) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = root.add_subcommand(
      "bench",
      "Measure writes and random gathers on the loaderx workloads, or gathers on STORE, beside same-run baselines");
  cmd->add_option("store", a->store, "An existing store: measure random gathers on it (and its baselines) only");
  offer_choices(
      cmd->add_option("-w,--workload", a->workloads,
                      "Workloads, comma-separated: vision, vision-var, tokens, tokens-var (default: all four)")
          ->delimiter(','),
      workload_names());
  offer_choices(
      cmd->add_option("-c,--codec", a->codecs,
                      "Codecs, comma-separated: raw, zstd, zstd_dict, auto (a store created with --codec auto) "
                      "(default: raw, zstd, zstd_dict)")
          ->delimiter(','),
      new_codec_names());
  cmd->add_option("-n,--records", a->records,
                  "Records per workload (default: as loaderx: 2500 images, 200000 token records)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 40));
  cmd->add_option("--bytes", a->bytes, "Logical bytes per workload instead of --records, e.g. 1GiB, 256M");
  cmd->add_option("-b,--batch", a->batch, "Records per gather batch (default: 256, as loaderx)")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 24));
  cmd->add_option("--dir", a->dir, "Where the temporary stores are built (default: $TMPDIR or /tmp)");
  cmd->add_flag("--json", a->json, "Print one JSON object on stdout (keys in man zrec-bench)");
  cmd->add_flag("--cold", a->cold,
                "Evict the store's files from the page cache (posix_fadvise DONTNEED) before each gather batch "
                "(default: warm)");
  cmd->add_option("--seconds", a->seconds, "Minimum timed gathering per measurement, in seconds (default: 2)")
      ->check(CLI::Range(0.01, 3600.0));
  cmd->add_option("--rounds", a->rounds, "Measurements interleave in this many rounds (default: 4)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--seed", a->seed, "Seed of the generated records and of the batch ids (default: 1)");
  cmd->add_option("--shards", a->shards, "data_shards of the stores built, 1..255 (default: 4)")
      ->check(CLI::Range(1, 255));
  cmd->add_flag("--sync", a->sync, "fsync when the writer publishes, inside the write time (default: off, as loaderx)");
  cmd->add_flag("--keep", a->keep, "Keep the stores built (their paths are printed with -v and in --json)");
  cmd->add_option("--export", a->export_dir,
                  "Also write the generated records as .npy files under DIR/<workload>/ (for scripts/bench_peers.py)");
  return Command{cmd, [a, &global]() { return run_bench(*a, global); }, nullptr, [] { return true; }};
}

}  // namespace zrec::cli
