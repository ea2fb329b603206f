// Text and JSON reports of `zrec bench`.
#include "cli/report/bench_report.h"

#define ZSTD_STATIC_LINKING_ONLY
#include <sys/utsname.h>
#include <zstd.h>

#include <fstream>

#include <fmt/format.h>

#include "zrec/lanes.h"

#include "cli/options/option_values.h"
#include "cli/report/byte_size.h"

namespace zrec::cli {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string mib_s(const bench::Throughput& t) {
  return t.measured ? fmt::format("{:.0f} MiB/s", t.bytes_per_s() / kMiB) : "-";
}
std::string krec_s(const bench::Throughput& t) {
  return t.measured ? fmt::format("{:.1f}", t.records_per_s() / 1e3) : "-";
}
std::string ms(const bench::Throughput& t, double v) {
  return t.measured && t.batches > 0 ? fmt::format("{:.2f} ms", v) : "-";
}
// a / b as a percentage, "-" when either is missing.
double ratio(double a, double b) { return b > 0 ? a / b : 0; }
std::string pct(double r) { return r > 0 ? fmt::format("{:.0f}%", 100 * r) : "-"; }

double gather_vs_limit(const bench::Throughput& g, const bench::Throughput& limit) {
  return g.measured && limit.measured ? ratio(g.records_per_s(), limit.records_per_s()) : 0;
}

void throughput_json(JsonWriter& j, const bench::Throughput& t) {
  j.begin_object();
  j.key("records").value(t.records);
  j.key("bytes").value(t.bytes);
  j.key("batches").value(t.batches);
  j.key("elapsed_s").value(t.seconds);
  j.key("bytes_per_s").value(t.bytes_per_s());
  j.key("records_per_s").value(t.records_per_s());
  j.key("p50_ms").value(t.p50_ms);
  j.key("p95_ms").value(t.p95_ms);
  j.key("p99_ms").value(t.p99_ms);
  j.end_object();
}

const char* kHeader =
    "| backend | logical write | logical gather | krecords/s | p50 | p95 | p99 | disk | ratio "
    "| gather / pread limit | gather / in-memory decode | write / in-memory encode |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";

}  // namespace

BenchEnvironment collect_environment(size_t threads) {
  BenchEnvironment e;
  e.zrec_version = ZREC_VERSION;
  e.zstd_version = ZSTD_versionString();
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      e.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
  }
  if (e.cpu_model.empty()) e.cpu_model = "unknown CPU";
  struct utsname u;
  if (::uname(&u) == 0) e.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::ifstream loadavg("/proc/loadavg");
  loadavg >> e.load1 >> e.load5;
  e.cpus = available_cpus();
  e.physical_cores = available_physical_cores();
  e.read_lanes = read_lane_budget(threads);
  e.write_lanes = write_lane_budget(threads);
#ifdef __OPTIMIZE__
  e.optimized = true;
#endif
#ifndef NDEBUG
  e.assertions = true;
#endif
  e.build = std::string(e.optimized ? "optimized" : "NOT optimized") + (e.assertions ? ", assertions on" : "");
  if (!e.optimized)
    e.warnings.push_back(
        "this zrec is not an optimized build: figures are meaningless (build with -DCMAKE_BUILD_TYPE=Release)");
  if (e.assertions) e.warnings.push_back("assertions are enabled: figures are pessimistic");
  if (e.load1 > double(e.cpus))
    e.warnings.push_back(
        fmt::format("load average {:.2f} exceeds the {} CPUs: absolute figures are noisy, "
                    "use the same-run ratios",
                    e.load1, e.cpus));
  return e;
}

std::string environment_text(const BenchEnvironment& e, const std::string& codecs, bool cold) {
  std::string t;
  t += fmt::format("zrec bench: zrec {}, zstd {}, {} build\n", e.zrec_version, e.zstd_version, e.build);
  t += fmt::format("zrec bench: {} ({} CPUs, {} cores), {}\n", e.cpu_model, e.cpus, e.physical_cores, e.kernel);
  t += fmt::format("zrec bench: lanes: {} read, {} write; codecs: {}; page cache: {}; load average {:.2f} {:.2f}\n",
                   e.read_lanes, e.write_lanes, codecs, cold ? "cold (evicted before each batch)" : "warm", e.load1,
                   e.load5);
  for (const auto& w : e.warnings) t += "zrec bench: warning: " + w + "\n";
  return t;
}

void environment_json(JsonWriter& j, const BenchEnvironment& e) {
  j.begin_object();
  j.key("zrec_version").value(e.zrec_version);
  j.key("zstd_version").value(e.zstd_version);
  j.key("cpu_model").value(e.cpu_model);
  j.key("kernel").value(e.kernel);
  j.key("cpus").value(uint64_t{e.cpus});
  j.key("physical_cores").value(uint64_t{e.physical_cores});
  j.key("read_lanes").value(uint64_t{e.read_lanes});
  j.key("write_lanes").value(uint64_t{e.write_lanes});
  j.key("optimized").value(e.optimized);
  j.key("assertions").value(e.assertions);
  j.key("load_average_1m").value(e.load1);
  j.key("load_average_5m").value(e.load5);
  j.end_object();
}

namespace {
// The row's name: "auto (zstd_dict)" for the --codec auto store.
std::string label(const bench::CodecResult& c) {
  return c.automatic ? "auto (" + std::string(to_string(c.codec)) + ")" : to_string(c.codec);
}
}  // namespace

std::string workload_text(const bench::WorkloadResult& r) {
  std::string t = fmt::format("\n### {}: {}\n\n", bench::to_string(r.workload), bench::describe(r.workload));
  t += fmt::format(
      "{} records, {} logical ({:.1f} KiB per record), batch {}, lanes {} read / {} write, {} page cache\n\n",
      r.records, format_mib(r.logical_bytes), double(r.logical_bytes) / double(r.records) / 1024, r.batch, r.read_lanes,
      r.write_lanes, r.cold ? "cold" : "warm");
  t += kHeader;
  for (const auto& c : r.codecs) {
    t +=
        fmt::format("| zrecord-{} | {} | {} | {} | {} | {} | {} | {} | {:.2f}x | {} | {} | {} |\n", label(c),
                    mib_s(c.write), mib_s(c.gather), krec_s(c.gather), ms(c.gather, c.gather.p50_ms),
                    ms(c.gather, c.gather.p95_ms), ms(c.gather, c.gather.p99_ms), format_mib(c.disk_bytes),
                    ratio(double(r.logical_bytes), double(c.disk_bytes)), pct(gather_vs_limit(c.gather, r.pread_limit)),
                    pct(ratio(c.gather.records_per_s(), c.mem_decode.records_per_s())),
                    pct(ratio(c.write.bytes_per_s(), c.mem_encode.bytes_per_s())));
  }
  const auto& l = r.pread_limit;
  t += fmt::format("| pread limit | - | {} | {} | {} | {} | {} | - | - | 100% | - | - |\n", mib_s(l), krec_s(l),
                   ms(l, l.p50_ms), ms(l, l.p95_ms), ms(l, l.p99_ms));
  for (const auto& c : r.codecs) {
    const auto& d = c.mem_decode;
    t += fmt::format("| in-memory {} | {} | {} | {} | {} | {} | {} | - | - | {} | - | - |\n", label(c),
                     mib_s(c.mem_encode), mib_s(d), krec_s(d), ms(d, d.p50_ms), ms(d, d.p95_ms), ms(d, d.p99_ms),
                     pct(gather_vs_limit(d, r.pread_limit)));
  }
  return t;
}

void workload_json(JsonWriter& j, const bench::WorkloadResult& r) {
  j.begin_object();
  j.key("workload").value(bench::to_string(r.workload));
  write_schema(j, r.schema);
  j.key("records").value(r.records);
  j.key("logical_bytes").value(r.logical_bytes);
  j.key("batch").value(r.batch);
  j.key("read_lanes").value(uint64_t{r.read_lanes});
  j.key("write_lanes").value(uint64_t{r.write_lanes});
  j.key("cold").value(r.cold);
  j.key("pread_limit");
  throughput_json(j, r.pread_limit);
  j.key("codecs").begin_array();
  for (const auto& c : r.codecs) {
    j.begin_object();
    j.key("codec").value(bench::codec_label(c));
    if (c.automatic) j.key("chosen").value(to_string(c.codec));
    j.key("backend").value("zrecord-" + bench::codec_label(c));
    j.key("write");
    throughput_json(j, c.write);
    j.key("gather");
    throughput_json(j, c.gather);
    j.key("memory_encode");
    throughput_json(j, c.mem_encode);
    j.key("memory_decode");
    throughput_json(j, c.mem_decode);
    j.key("disk_bytes").value(c.disk_bytes);
    j.key("payload_bytes").value(c.payload_bytes);
    j.key("dict_bytes").value(c.dict_bytes);
    j.key("disk_ratio").value(ratio(double(r.logical_bytes), double(c.disk_bytes)));
    j.key("gather_vs_pread_limit").value(gather_vs_limit(c.gather, r.pread_limit));
    j.key("gather_vs_memory_decode").value(ratio(c.gather.records_per_s(), c.mem_decode.records_per_s()));
    j.key("write_vs_memory_encode").value(ratio(c.write.bytes_per_s(), c.mem_encode.bytes_per_s()));
    if (!c.store_path.empty()) j.key("path").value(c.store_path);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

std::string store_text(const bench::StoreBenchResult& r) {
  std::string t = fmt::format("\n### {}: {} {}\n\n", r.path, r.schema.describe(), to_string(r.codec));
  t += fmt::format("{} records, {} logical, {} stored, {} on disk, batch {}, {} lanes, {} page cache\n\n", r.records,
                   format_mib(r.logical_bytes), format_mib(r.payload_bytes), format_mib(r.disk_bytes), r.batch, r.lanes,
                   r.cold ? "cold" : "warm");
  t += "| measurement | logical gather | stored bytes read | krecords/s | p50 | p95 | p99 | vs pread limit |\n"
       "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  const double stored_per_logical = r.logical_bytes ? double(r.payload_bytes) / double(r.logical_bytes) : 1;
  auto row = [&](const std::string& name, const bench::Throughput& x, bool logical) {
    if (!x.measured) return;
    const double logical_rate = logical ? x.bytes_per_s() : x.bytes_per_s() / stored_per_logical;
    const double stored_rate = logical ? x.bytes_per_s() * stored_per_logical : x.bytes_per_s();
    t += fmt::format("| {} | {:.0f} MiB/s | {:.0f} MiB/s | {} | {} | {} | {} | {} |\n", name, logical_rate / kMiB,
                     stored_rate / kMiB, krec_s(x), ms(x, x.p50_ms), ms(x, x.p95_ms), ms(x, x.p99_ms),
                     pct(gather_vs_limit(x, r.pread_limit)));
  };
  row(std::string("zrecord-") + to_string(r.codec), r.gather, true);
  row("pread limit", r.pread_limit, false);
  row(std::string("in-memory ") + to_string(r.codec), r.mem_decode, true);
  if (r.mem_decode.measured)
    t += fmt::format("\ngather / in-memory decode: {}\n",
                     pct(ratio(r.gather.records_per_s(), r.mem_decode.records_per_s())));
  return t;
}

void store_json(JsonWriter& j, const bench::StoreBenchResult& r) {
  j.key("path").value(r.path);
  write_schema(j, r.schema);
  j.key("codec").value(to_string(r.codec));
  j.key("length").value(r.records);
  j.key("logical_bytes").value(r.logical_bytes);
  j.key("payload_bytes").value(r.payload_bytes);
  j.key("disk_bytes").value(r.disk_bytes);
  j.key("batch").value(r.batch);
  j.key("lanes").value(uint64_t{r.lanes});
  j.key("cold").value(r.cold);
  j.key("gather");
  throughput_json(j, r.gather);
  j.key("pread_limit");
  throughput_json(j, r.pread_limit);
  j.key("memory_decode");
  if (r.mem_decode.measured) throughput_json(j, r.mem_decode);
  else j.null();
  j.key("gather_vs_pread_limit").value(gather_vs_limit(r.gather, r.pread_limit));
  j.key("gather_vs_memory_decode").value(ratio(r.gather.records_per_s(), r.mem_decode.records_per_s()));
}

}  // namespace zrec::cli
