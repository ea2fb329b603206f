// write_store_overview (see overview.h).
#include "cli/view/overview.h"

#include <zstd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <vector>

#include "cli/formats/record_format.h"
#include "cli/os/interrupt.h"
#include "cli/report/record_stats.h"
#include "cli/report/table_stats.h"
#include "cli/view/record_filter.h"

namespace zrec::cli::view {

namespace {

// `name`: the key of the object, or nullptr for an element of an array.
void write_stats(JsonWriter& j, const char* name, const SizeStats& st) {
  if (name != nullptr) j.key(name);
  j.begin_object();
  j.key("min").value(st.min()).key("p50").value(st.percentile(50)).key("p99").value(st.percentile(99));
  j.key("max").value(st.max());
  // Bins of equal width, or on a log scale for sizes spanning 64x or more.
  const SizeStats::Drawn h = st.drawn_histogram(kHistogramBins);
  j.key("histogram").begin_object();
  j.key("scale").value(h.log ? "log" : "linear");
  j.key("edges").begin_array();
  for (uint64_t e : h.edges) j.value(e);
  j.end_array().key("counts").begin_array();
  for (uint64_t c : h.counts) j.value(c);
  j.end_array().end_object();
  j.end_object();
}

// Each dimension's statistics of a Ragged store of ndim > 1: its records' shape
// prefixes, which only the (possibly compressed) payloads hold.
Status scan_dims(Store& store, std::vector<SizeStats>& dims) {
  const Schema& schema = store.schema();
  dims.resize(schema.ndim);
  constexpr uint64_t kIdsPerScan = uint64_t{1} << 20;
  std::vector<uint64_t> ids;
  for (uint64_t first = 0; first < store.length(); first += kIdsPerScan) {
    ids.clear();
    for (uint64_t id = first; id < std::min(store.length(), first + kIdsPerScan); ++id) ids.push_back(id);
    ZREC_RETURN_IF_ERROR(store.scan(ids, kDimsWindowBytes, [&](const Window& w) -> Status {
      if (interrupted()) return cancelled("stopped");
      for (size_t k = 0; k < w.ids.size(); ++k) {
        const std::vector<uint64_t> d = ragged_dims(schema, w.data + w.offsets[k]);
        for (uint32_t i = 0; i < schema.ndim; ++i) dims[i].add(d[i]);
      }
      return Status::ok();
    }));
  }
  return Status::ok();
}

// The values of the first kValueSample records (kRemoteValueSample for a remote store),
// counted while they take at most
// kMaxDistinctValues values (`counts` is cleared and `too_many` set past that).
Status count_values(Store& store, std::map<int64_t, uint64_t>& counts, bool& too_many, uint64_t& sampled) {
  const Schema& schema = store.schema();
  std::vector<uint64_t> ids(std::min(store.length(), store.is_remote() ? kRemoteValueSample : kValueSample));
  for (uint64_t i = 0; i < ids.size(); ++i) ids[i] = i;
  sampled = ids.size();
  return store.scan(ids, kDimsWindowBytes, [&](const Window& w) -> Status {
    if (interrupted()) return cancelled("stopped");
    if (too_many) return Status::ok();
    // A Ragged record (labels as text) starts with its shape prefix.
    const uint64_t prefix = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
    for (size_t k = 0; k < w.ids.size(); ++k) {
      const uint64_t n = w.offsets[k + 1] - w.offsets[k];
      if (n < prefix) continue;
      const std::optional<int64_t> v = label_of(schema, w.data + w.offsets[k] + prefix, n - prefix);
      if (!v) continue;
      ++counts[*v];
      if (counts.size() > kMaxDistinctValues) {
        counts.clear();
        too_many = true;
        break;
      }
    }
    return Status::ok();
  });
}

void write_values(JsonWriter& j, Store& store, const LineList* names, Status& status) {
  std::map<int64_t, uint64_t> counts;
  bool too_many = false;
  uint64_t sampled = 0;
  status = count_values(store, counts, too_many, sampled);
  if (!status.is_ok()) return;
  j.key("values").begin_object().key("sampled").value(sampled).key("distinct");
  if (too_many) j.null();
  else j.value(uint64_t{counts.size()});
  j.key("counts");
  if (too_many) {
    j.null();
  } else {
    j.begin_array();
    for (const auto& [value, count] : counts) {
      j.begin_object().key("value").value(value).key("count").value(count);
      if (names != nullptr && value >= 0 && static_cast<uint64_t>(value) < names->size())
        j.key("name").value((*names)[static_cast<size_t>(value)]);
      j.end_object();
    }
    j.end_array();
  }
  j.end_object();
}

}  // namespace

Status write_store_overview(JsonWriter& j, const std::string& name, Store& store, bool dims, const LineList* names) {
  const Schema& schema = store.schema();
  const uint64_t length = store.length();
  // As info describes it: the whole table, or a remote store's sample (table_stats.h).
  ZREC_ASSIGN_OR_RETURN(const TableStats table, read_table_stats(store, /*exact=*/false));
  const SizeStats& stored = table.stored;
  const SizeStats& logical = table.logical;
  std::vector<SizeStats> dim_stats;
  if (!schema.is_dense() && schema.ndim > 1 && dims) ZREC_RETURN_IF_ERROR(scan_dims(store, dim_stats));
  uint64_t disk = 0;
  for (const auto& f : store.file_sizes()) disk += f.second;
  const uint64_t payload = store.stored_bytes();
  const auto& dict = store.dictionary();

  j.begin_object();
  j.key("name").value(name);
  write_schema(j, schema);
  j.key("codec").value(to_string(store.codec()));
  j.key("shards").value(uint64_t{store.data_shards()});
  j.key("length").value(length);
  j.key("logical_bytes").value(table.logical_bytes);
  j.key("payload_bytes").value(payload);
  j.key("disk_bytes").value(disk);
  j.key("compression_ratio").value(payload ? double(table.logical_bytes) / double(payload) : 1.0);
  j.key("dict_bytes").value(store.dict_bytes());
  j.key("dict_id");
  if (dict.empty()) j.null();
  else j.value(uint64_t{ZSTD_getDictID_fromDict(dict.data(), dict.size())});
  j.key("checksum").value(store.checksum());
  j.key("writer_active").value(store.writer_active());
  j.key("sampled_records");  // as info's: a remote store's statistics from a sample
  if (table.sampled) j.value(table.sampled);
  else j.null();
  j.key("record_sizes").begin_object();
  write_stats(j, "stored", stored);
  write_stats(j, "logical", logical);
  if (table.elements) write_stats(j, "elements", *table.elements);
  if (table.elements && (schema.ndim == 1 || !dim_stats.empty())) {
    j.key("dims").begin_array();
    if (schema.ndim == 1) write_stats(j, nullptr, *table.elements);
    for (const SizeStats& d : dim_stats) write_stats(j, nullptr, d);
    j.end_array();
  }
  j.end_object();
  // Labels: a Dense store of integers, or decimal text that names (--labels, the card) are given for.
  if (holds_labels(schema) || (names != nullptr && holds_text(schema))) {
    Status counted;
    write_values(j, store, names, counted);
    ZREC_RETURN_IF_ERROR(counted);
  }
  j.end_object();
  return Status::ok();
}

}  // namespace zrec::cli::view
