// A command's outcome: a summary line or one JSON object (see command_report.h).
#include "cli/report/command_report.h"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "cli/formats/printable.h"
#include "cli/report/console.h"

namespace zrec::cli {

CommandReport::CommandReport(std::string command, const OutputPrefs& global, bool json)
    : command_(std::move(command)),
      verbosity_(global.verbosity),
      remote_reads_(global.remote_reads),
      json_(json),
      started_(std::chrono::steady_clock::now()) {}

double CommandReport::elapsed_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
}

JsonFacts& JsonFacts::put(std::string_view key, std::string json) {
  for (auto& [k, v] : facts_)
    if (k == key) {
      v = std::move(json);
      return *this;
    }
  facts_.emplace_back(std::string(key), std::move(json));
  return *this;
}

JsonFacts& JsonFacts::set(std::string_view key, uint64_t value) { return put(key, std::to_string(value)); }
JsonFacts& JsonFacts::set(std::string_view key, int64_t value) { return put(key, std::to_string(value)); }
JsonFacts& JsonFacts::set(std::string_view key, double value) {
  JsonWriter j;
  j.value(value);
  return put(key, j.str());
}
JsonFacts& JsonFacts::set(std::string_view key, bool value) { return put(key, value ? "true" : "false"); }
JsonFacts& JsonFacts::set(std::string_view key, std::string_view value) {
  std::string s;
  append_json_string(s, value);
  return put(key, std::move(s));
}
JsonFacts& JsonFacts::set(std::string_view key, const std::vector<std::string>& values) {
  JsonWriter j;
  j.begin_array();
  for (const auto& v : values) j.value(v);
  j.end_array();
  return put(key, j.str());
}
JsonFacts& JsonFacts::set_null(std::string_view key) { return put(key, "null"); }
JsonFacts& JsonFacts::set_json(std::string_view key, std::string json) { return put(key, std::move(json)); }

JsonFacts& JsonFacts::set_schema(const Schema& schema) {
  for (auto& [key, value] : schema_json_fields(schema)) put(key, std::move(value));
  return *this;
}

std::string JsonFacts::object() const {
  JsonWriter j;
  j.begin_object();
  for (const auto& [k, v] : facts_) j.key(k).raw(v);
  j.end_object();
  return j.str();
}

void CommandReport::note(std::string_view text) const {
  if (json_ || verbosity_ < 0) return;
  // Summaries quote paths and stream names: escaped as every message is (printable.h).
  const std::string line = "zrec " + command_ + ": " + printable(text) + "\n";
  std::fputs(line.c_str(), stderr);
}

Status CommandReport::finish(std::string_view summary, Level level) {
  if (!json_) {
    if (summary.empty()) return Status::ok();
    if (level == Level::kVerbose) spdlog::info("{}", summary);  // the logger prints it with -v only
    else note(summary);
    return Status::ok();
  }
  if (std::string remote = remote_stats_object({.remote_reads = remote_reads_}); !remote.empty())
    set_json("remote", std::move(remote));
  set("elapsed_s", elapsed_s());
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));
  ZREC_RETURN_IF_ERROR(out.write(object() + "\n"));
  return out.flush();
}

}  // namespace zrec::cli
