// A small JSON writer for `--json` reports: one object, snake_case keys, integers as
// integers. Keys and values are appended in call order; commas are handled here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zrec/schema.h"

#include "cli/formats/json_string.h"
#include "cli/report/output_prefs.h"

namespace zrec::cli {

// append_json_string (cli/formats/json_string.h) writes every string of it.

class JsonWriter {
 public:
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view v);
  JsonWriter& value(const char* v) { return value(std::string_view(v)); }
  JsonWriter& value(uint64_t v);
  JsonWriter& value(int64_t v);
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(double v);
  JsonWriter& value(bool v);
  JsonWriter& null();
  // Inserts already-serialized JSON as one value.
  JsonWriter& raw(std::string_view json);
  const std::string& str() const { return out_; }
  // Moves out what was written so far and keeps writing after it (open containers stay
  // open): a long document goes out in pieces.
  std::string take() { return std::exchange(out_, std::string()); }

 private:
  void before_value();
  JsonWriter& open(char bracket);   // '{' or '[': a new container, as a value
  JsonWriter& close(char bracket);  // '}' or ']'
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

// "dense" or "ragged": a schema's kind, as every report (text and JSON) names it.
const char* schema_kind(const Schema& s);

// A schema as every --json report writes it, as keys of the object being written:
// "kind" ("dense" | "ragged"), "dtype" (NumPy descr, e.g. "<f4"), "ndim" and
// "item_shape" (an array of dims for Dense, null for Ragged). schema_json_fields gives
// the same as (key, JSON value) pairs, for reports that gather their facts first
// (JsonFacts::set_schema): one rule for both.
void write_schema(JsonWriter& j, const Schema& s);
std::vector<std::pair<const char*, std::string>> schema_json_fields(const Schema& s);

// "remote": {"requests": N, "bytes": N, "retries": N}, what the command's reads of
// remote stores cost (OutputPrefs::remote_reads, zrec/remote.h), as a key of the object
// being written; nothing when it read none. Every command that reads stores writes it
// in its --json report.
void write_remote_stats(JsonWriter& j, const OutputPrefs& prefs);
std::string remote_stats_object(const OutputPrefs& prefs);  // that object alone; empty when none

}  // namespace zrec::cli
