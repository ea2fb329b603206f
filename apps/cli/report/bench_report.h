// How `zrec bench` reports: the environment (stderr), Markdown tables in the layout of
// the loaderx benchmark tables (stdout), or one JSON object (--json). The JSON keys are
// listed in man/zrec-bench.1; renaming one is a breaking change.
#pragma once

#include <string>
#include <vector>

#include "cli/report/json.h"
#include "zrec_bench.h"

namespace zrec::cli {

struct BenchEnvironment {
  std::string zrec_version, zstd_version, cpu_model, kernel, build;
  size_t cpus = 0, physical_cores = 0, read_lanes = 0, write_lanes = 0;
  double load1 = 0, load5 = 0;
  bool optimized = false, assertions = false;
  std::vector<std::string> warnings;  // e.g. not an optimized build
};

// Collects the environment for lanes from --threads (0: the docs/format.md §9 budgets).
BenchEnvironment collect_environment(size_t threads);
// Lines for stderr: "zrec bench: zrec 0.1.0, zstd 1.5.4, AMD EPYC (2 CPUs, 2 cores) ...".
std::string environment_text(const BenchEnvironment& env, const std::string& codecs, bool cold);
void environment_json(JsonWriter& j, const BenchEnvironment& env);

// One Markdown table per workload, with the upstream columns plus p50/p99 and the
// same-run ratios, then the baseline rows.
std::string workload_text(const bench::WorkloadResult& r);
void workload_json(JsonWriter& j, const bench::WorkloadResult& r);

std::string store_text(const bench::StoreBenchResult& r);
void store_json(JsonWriter& j, const bench::StoreBenchResult& r);

}  // namespace zrec::cli
