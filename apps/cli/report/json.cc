// JSON writer for machine-readable reports.
#include "cli/report/json.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>

#include "zrec/remote.h"

namespace zrec::cli {

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ", ";
    first_.back() = false;
  }
}

JsonWriter& JsonWriter::open(char bracket) {
  before_value();
  out_ += bracket;
  first_.push_back(true);
  return *this;
}
JsonWriter& JsonWriter::close(char bracket) {
  out_ += bracket;
  first_.pop_back();
  return *this;
}
JsonWriter& JsonWriter::begin_object() { return open('{'); }
JsonWriter& JsonWriter::end_object() { return close('}'); }
JsonWriter& JsonWriter::begin_array() { return open('['); }
JsonWriter& JsonWriter::end_array() { return close(']'); }
JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  append_json_string(out_, k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}
JsonWriter& JsonWriter::value(std::string_view v) {
  before_value();
  append_json_string(out_, v);
  return *this;
}
JsonWriter& JsonWriter::value(uint64_t v) {
  before_value();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter& JsonWriter::value(int64_t v) {
  before_value();
  out_ += std::to_string(v);
  return *this;
}
JsonWriter& JsonWriter::value(double v) {
  before_value();
  if (std::isfinite(v)) {
    std::string s = fmt::format("{}", v);
    // Keep the JSON type stable: 1.0 prints as "1" otherwise, which typed parsers read as an int.
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    out_ += s;
  } else {
    out_ += "null";  // strict JSON has no NaN/Infinity
  }
  return *this;
}
JsonWriter& JsonWriter::value(bool v) {
  before_value();
  out_ += v ? "true" : "false";
  return *this;
}
JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}
JsonWriter& JsonWriter::raw(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

const char* schema_kind(const Schema& s) { return s.is_dense() ? "dense" : "ragged"; }

std::vector<std::pair<const char*, std::string>> schema_json_fields(const Schema& s) {
  std::vector<std::pair<const char*, std::string>> fields;
  auto add = [&](const char* key, const std::function<void(JsonWriter&)>& write) {
    JsonWriter j;
    write(j);
    fields.emplace_back(key, j.str());
  };
  add("kind", [&](JsonWriter& j) { j.value(schema_kind(s)); });
  add("dtype", [&](JsonWriter& j) { j.value(s.dtype.str()); });
  add("ndim", [&](JsonWriter& j) { j.value(uint64_t{s.ndim}); });
  add("item_shape", [&](JsonWriter& j) {
    if (!s.item_shape) {
      j.null();
      return;
    }
    j.begin_array();
    for (uint64_t d : *s.item_shape) j.value(d);
    j.end_array();
  });
  return fields;
}

void write_schema(JsonWriter& j, const Schema& s) {
  for (const auto& [key, value] : schema_json_fields(s)) j.key(key).raw(value);
}

std::string remote_stats_object(const OutputPrefs& prefs) {
  if (!prefs.remote_reads) return "";
  const RemoteStats stats = prefs.remote_reads->load();
  if (stats.requests == 0) return "";
  JsonWriter j;
  j.begin_object().key("requests").value(stats.requests).key("bytes").value(stats.bytes);
  j.key("retries").value(stats.retries).end_object();
  return j.str();
}

void write_remote_stats(JsonWriter& j, const OutputPrefs& prefs) {
  if (const std::string object = remote_stats_object(prefs); !object.empty()) j.key("remote").raw(object);
}

}  // namespace zrec::cli
