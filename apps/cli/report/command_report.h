// The outcome of a command, in one place: every command that writes or reads stores
// (create, append-*, recompress, concat, digest, train-dict) fills a CommandReport with
// its facts as they become known, and ends with finish(summary), which prints either
//   - with --json: one JSON object on stdout holding the facts, then "elapsed_s"; or
//   - otherwise: "zrec <command>: <summary>" on stderr, unless -q.
// So -q, -v and --json are decided here, not by each command. The key names are
// shared across commands (docs/json.md has the table; each man page lists its keys):
// use the same key for the same fact, and a new key for a new fact.
//
//   CommandReport report("recompress", global, args.json);
//   report.set("path", dst).set("length", stats.records);
//   report.note("trained a dictionary: ...");  // an extra stderr line, not under --json/-q
//   return report.finish("wrote '" + dst + "' ...");
//
// Nothing is printed when a command fails: it returns its error instead of calling
// finish(), and the error goes to stderr as always.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zrec/schema.h"
#include "zrec/status.h"

#include "cli/report/json.h"
#include "cli/report/output_prefs.h"

namespace zrec::cli {

// An ordered set of facts: the keys of one JSON object, in the order first set.
// Setting a key again replaces its value in place.
class JsonFacts {
 public:
  JsonFacts& set(std::string_view key, uint64_t value);
  JsonFacts& set(std::string_view key, int64_t value);
  JsonFacts& set(std::string_view key, double value);
  JsonFacts& set(std::string_view key, bool value);
  JsonFacts& set(std::string_view key, std::string_view value);
  JsonFacts& set(std::string_view key, const char* value) { return set(key, std::string_view(value)); }
  JsonFacts& set(std::string_view key, const std::string& value) { return set(key, std::string_view(value)); }
  JsonFacts& set(std::string_view key, const std::vector<std::string>& values);  // an array of strings
  JsonFacts& set_null(std::string_view key);
  // A value already serialized as JSON (a nested object: JsonFacts::object()).
  JsonFacts& set_json(std::string_view key, std::string json);
  // The schema keys info and verify use: kind, dtype, ndim, item_shape.
  JsonFacts& set_schema(const Schema& schema);

  // The facts as one JSON object.
  std::string object() const;

 private:
  JsonFacts& put(std::string_view key, std::string json);
  std::vector<std::pair<std::string, std::string>> facts_;  // key, serialized value
};

class CommandReport : public JsonFacts {
 public:
  // `command` labels the summary line ("append-npy"); `json` is the command's --json.
  // The clock of elapsed_s starts here.
  CommandReport(std::string command, const OutputPrefs& global, bool json);

  bool json() const { return json_; }
  // Seconds since construction (what "elapsed_s" reports).
  double elapsed_s() const;

  // A line on stderr before the summary ("zrec <command>: <text>"), printed at once
  // unless -q or --json (whose object holds the same facts).
  void note(std::string_view text) const;

  // How loud the summary line is: kSummary, printed unless -q; kVerbose, only with -v,
  // as an info log line ("zrec create: info: created ...").
  enum class Level { kSummary, kVerbose };

  // Prints the outcome (see the top of this file). An empty `summary` means the
  // command has no summary line (digest: its output is the digests). Returns the
  // error of writing the JSON object to stdout (a closed pipe, a full disk).
  Status finish(std::string_view summary, Level level = Level::kSummary);

 private:
  const std::string command_;
  const int verbosity_;
  const std::shared_ptr<const RemoteCounters> remote_reads_;
  const bool json_;
  const std::chrono::steady_clock::time_point started_;
};

}  // namespace zrec::cli
