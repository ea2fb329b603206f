// zrec info: describe a store, or every store (named stream) in a directory.
#include <sys/stat.h>
#include <zstd.h>

#include <algorithm>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/remote.h"
#include "zrec/store.h"

#include "cli/app/app.h"
#include "cli/app/command.h"
#include "cli/formats/npy.h"
#include "cli/formats/printable.h"
#include "cli/options/many_paths.h"
#include "cli/options/option_values.h"
#include "cli/os/interrupt.h"
#include "cli/report/byte_size.h"
#include "cli/report/console.h"
#include "cli/report/json.h"
#include "cli/report/progress.h"
#include "cli/report/record_stats.h"
#include "cli/report/table_stats.h"
#include "cli/roots/card_file.h"
#include "cli/roots/root_problems.h"

namespace zrec::cli {

namespace {

struct InfoArgs {
  std::string path;
  bool json = false;
  bool shards = false;
  bool dims = false;   // --dims: per-dimension stats of a Ragged store with ndim > 1 (reads payloads)
  bool exact = false;  // --exact: a remote store's statistics from its whole table, not a sample
};

// Below this logical/payload ratio a compressing codec costs decode time for nothing.
constexpr double kCodecPaysRatio = 1.05;

struct ShardRow {
  uint64_t records = 0, payload_bytes = 0, logical_bytes = 0;
};

struct StoreSummary {
  std::string path;
  Schema schema;
  std::string codec;
  uint32_t shards = 0;
  uint64_t length = 0, logical_bytes = 0, payload_bytes = 0, disk_bytes = 0, dict_bytes = 0;
  std::vector<std::pair<std::string, uint64_t>> files;
  bool checksum = false, writer_active = false;
  uint32_t dict_id = 0;
  SizeStats stored, logical;
  std::optional<SizeStats> elements;  // Ragged: elements per record (prod of dims)
  std::vector<SizeStats> dims;        // Ragged with --dims: each dimension (ndim 1: from the table)
  std::vector<ShardRow> shard_rows;
  uint64_t sampled = 0;  // the records the statistics come from, when not all (a remote store)
  bool codec_does_not_pay() const { return codec != "raw" && payload_bytes > 0 && ratio() < kCodecPaysRatio; }
  double ratio() const { return payload_bytes ? double(logical_bytes) / double(payload_bytes) : 1.0; }
};

// Ragged, ndim > 1: each dimension's statistics need the records' shape prefixes,
// which only the (possibly compressed) payloads hold: one windowed scan of every record.
Status scan_dims(Store& store, StoreSummary& s) {
  const Schema& schema = store.schema();
  s.dims.resize(schema.ndim);
  constexpr uint64_t kIdsPerScan = uint64_t{1} << 20;
  std::vector<uint64_t> ids;
  for (uint64_t first = 0; first < s.length; first += kIdsPerScan) {
    ids.clear();
    for (uint64_t id = first; id < std::min(s.length, first + kIdsPerScan); ++id) ids.push_back(id);
    ZREC_RETURN_IF_ERROR(store.scan(ids, kDefaultWindowBytes, [&](const Window& w) {
      for (size_t k = 0; k < w.ids.size(); ++k) {
        const std::vector<uint64_t> dims = ragged_dims(schema, w.data + w.offsets[k]);
        for (uint32_t d = 0; d < schema.ndim; ++d) s.dims[d].add(dims[d]);
      }
      return Status::ok();
    }));
  }
  return Status::ok();
}

Result<StoreSummary> summarize(const std::string& path, const GlobalOptions& g, bool dims, bool exact) {
  std::unique_ptr<Store> store;
  {
    InterruptScope during_lock_wait;  // --wait ends on SIGINT/SIGTERM: 130/143
    // A store a writer is appending to is described as last published (--wait: after it).
    Context ctx = g.read_context(path);
    ctx.snapshot_if_busy = true;
    ZREC_ASSIGN_OR_RETURN(store, Store::open(path, {}, ctx));
  }
  StoreSummary s;
  s.path = redact_url(path);
  const Schema& schema = store->schema();
  s.schema = schema;
  // "auto" while the first append of a store created with --codec auto has yet to choose.
  s.codec = store->codec_pending() ? "auto" : to_string(store->codec());
  s.shards = store->data_shards();
  s.length = store->length();
  s.dict_bytes = store->dict_bytes();
  s.payload_bytes = store->stored_bytes();
  s.files = store->file_sizes();
  for (const auto& f : s.files) s.disk_bytes += f.second;
  s.checksum = store->checksum();
  s.writer_active = store->writer_active();
  const auto& dict = store->dictionary();
  if (!dict.empty()) s.dict_id = ZSTD_getDictID_fromDict(dict.data(), dict.size());
  // Every statistic comes from the RecordLoc table alone (no payload is read): one
  // sequential pass, or a sample of a remote store's table (table_stats.h). A Ragged
  // record's element count is (logic_length - 8*ndim) / itemsize, its dims' product.
  TableStats table;
  {
    // A whole table can take a while (16 MB for 10^6 records, over a network too).
    ProgressMeter meter(g, "info " + redact_url(path));
    meter.set_total_records(s.length);
    ZREC_ASSIGN_OR_RETURN(
        table, read_table_stats(*store, exact, [&](uint64_t done) { meter.update(done, done * sizeof(RecordLoc)); }));
  }
  s.stored = std::move(table.stored);
  s.logical = std::move(table.logical);
  s.elements = std::move(table.elements);
  s.sampled = table.sampled;
  s.logical_bytes = table.logical_bytes;
  s.shard_rows.resize(s.shards);
  for (uint32_t shard = 0; shard < s.shards; ++shard) {
    s.shard_rows[shard].records = table.shard_records[shard];
    s.shard_rows[shard].logical_bytes = table.shard_logical[shard];
  }
  if (!schema.is_dense() && schema.ndim == 1) s.dims.push_back(*s.elements);  // the one dim is the element count
  if (!schema.is_dense() && schema.ndim > 1 && dims) ZREC_RETURN_IF_ERROR(scan_dims(*store, s));
  for (uint32_t shard = 0; shard < s.shards; ++shard) s.shard_rows[shard].payload_bytes = store->tail(shard);
  return s;
}

std::string codec_hint(const StoreSummary& s) {
  return fmt::format("{} saves little here ({:.2f}x < {:.2f}x); consider --codec raw", s.codec, s.ratio(),
                     kCodecPaysRatio);
}

void to_json(JsonWriter& j, const StoreSummary& s, const OutputPrefs& g) {
  j.begin_object();
  j.key("path").value(s.path);
  write_schema(j, s.schema);
  j.key("codec").value(s.codec);
  j.key("shards").value(uint64_t{s.shards});
  j.key("length").value(s.length);
  j.key("logical_bytes").value(s.logical_bytes);
  j.key("payload_bytes").value(s.payload_bytes);
  j.key("disk_bytes").value(s.disk_bytes);
  j.key("compression_ratio").value(s.ratio());
  j.key("dict_bytes").value(s.dict_bytes);
  j.key("files").begin_object();
  for (const auto& f : s.files) j.key(f.first).value(f.second);
  j.end_object();
  j.key("checksum").value(s.checksum);
  j.key("dict_id");
  if (s.dict_bytes) {
    j.value(uint64_t{s.dict_id});
  } else {
    j.null();
  }
  j.key("writer_active").value(s.writer_active);
  // A remote store's statistics may come from a sample: how many records, or null (all).
  j.key("sampled_records");
  if (s.sampled) {
    j.value(s.sampled);
  } else {
    j.null();
  }
  j.key("record_sizes").begin_object();
  auto stats = [&](const char* name, const SizeStats& st) {
    j.key(name).begin_object();
    j.key("min").value(st.min()).key("p50").value(st.percentile(50)).key("p99").value(st.percentile(99));
    j.key("max").value(st.max()).end_object();
  };
  stats("stored", s.stored);
  stats("logical", s.logical);
  if (s.elements) stats("elements", *s.elements);
  if (!s.dims.empty()) {
    j.key("dims").begin_array();
    for (const SizeStats& d : s.dims) {
      j.begin_object().key("min").value(d.min()).key("p50").value(d.percentile(50));
      j.key("p99").value(d.percentile(99)).key("max").value(d.max()).end_object();
    }
    j.end_array();
  }
  j.end_object();
  j.key("shard_table").begin_array();
  for (uint32_t shard = 0; shard < s.shards; ++shard) {
    const ShardRow& r = s.shard_rows[shard];
    j.begin_object().key("shard").value(uint64_t{shard}).key("records").value(r.records);
    j.key("payload_bytes").value(r.payload_bytes).key("logical_bytes").value(r.logical_bytes).end_object();
  }
  j.end_array();
  j.key("hint");
  if (s.codec_does_not_pay()) {
    j.value(codec_hint(s));
  } else {
    j.null();
  }
  if (is_url(s.path)) write_remote_stats(j, g);
  j.end_object();
}

std::string stats_row(const char* name, const SizeStats& st) {
  return fmt::format("  {:<12}{:>12}{:>12}{:>12}{:>12}\n", name, st.min(), st.percentile(50), st.percentile(99),
                     st.max());
}

std::string to_text(const StoreSummary& s, bool shard_table) {
  std::string t;
  auto line = [&](const char* k, const std::string& v) { t += fmt::format("{:<14}{}\n", k, v); };
  line("store", printable(s.path));
  line("kind", schema_kind(s.schema));
  line("dtype", s.schema.dtype.str());
  line("ndim", std::to_string(s.schema.ndim));
  line("item_shape", s.schema.item_shape ? shape_to_string(*s.schema.item_shape) : "-");
  line("codec", s.codec);
  line("shards", std::to_string(s.shards));
  line("length", std::to_string(s.length));
  line("logical", format_bytes_exact(s.logical_bytes));
  line("payload", format_bytes_exact(s.payload_bytes));
  line("on disk", format_bytes_exact(s.disk_bytes));
  line("ratio", fmt::format("{:.2f}x (logical / payload)", s.ratio()));
  line("checksum", s.codec == "raw" ? "-" : s.checksum ? "yes (zstd content checksum per frame)" : "no");
  line("dictionary", s.dict_bytes ? fmt::format("{}, id {}", format_bytes_exact(s.dict_bytes), s.dict_id) : "-");
  if (s.writer_active) line("writer", "a writer is appending; this is the last published state");
  // The files, compactly: data files as one count and sum (--shards: one row each).
  uint64_t meta = 0, data = 0, dict = 0;
  for (const auto& f : s.files) (f.first == "meta.zr" ? meta : f.first == "dict.zr" ? dict : data) += f.second;
  line("files", fmt::format("meta.zr {}, {} data file{} {}{}", meta, s.shards, s.shards == 1 ? "" : "s", data,
                            s.dict_bytes ? fmt::format(", dict.zr {}", dict) : ""));
  if (s.sampled)
    line("sampled",
         fmt::format("record sizes and the logical total from {} of {} records (--exact: all)", s.sampled, s.length));
  t += fmt::format("record sizes  {:>12}{:>12}{:>12}{:>12}\n", "min", "p50", "p99", "max");
  t += stats_row("stored", s.stored);
  t += stats_row("logical", s.logical);
  if (s.elements) t += stats_row("elements", *s.elements);
  if (s.dims.size() > 1)
    for (size_t d = 0; d < s.dims.size(); ++d) t += stats_row(fmt::format("dim {}", d).c_str(), s.dims[d]);
  if (s.codec_does_not_pay()) line("hint", codec_hint(s));
  if (shard_table) {
    t += fmt::format("{:<14}{:>12}{:>16}{:>16}{:>16}\n", "shard", "records", "payload", "logical", "file");
    for (uint32_t shard = 0; shard < s.shards; ++shard) {
      const ShardRow& r = s.shard_rows[shard];
      t += fmt::format("{:<14}{:>12}{:>16}{:>16}{:>16}\n", shard, r.records, r.payload_bytes, r.logical_bytes,
                       s.files[1 + shard].second);
    }
  }
  return t;
}

// A file given where a store belongs: what it is by its name, and the command that
// imports it.
std::string not_a_store_file(const std::string& path) {
  const auto ends_with = [&](std::string_view suffix) {
    return path.size() >= suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  const std::string what = "'" + path + "' is a file, not a zrecord store (a directory)";
  for (const char* tar : {".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.xz", ".tar.bz2"})
    if (ends_with(tar))
      return what + "; a WebDataset tar is imported with: zrec append-tar --ext EXT,... STORE '" + path +
             "' (tar tf '" + path + "' | head lists its members)";
  if (ends_with(".npy")) return what + "; import it with: zrec append-npy STORE '" + path + "'";
  for (const char* h5 : {".h5", ".hdf5"})
    if (ends_with(h5))
      return what + "; import a dataset of it with: zrec append-h5 --create STORE '" + path + "' DATASET";
  if (ends_with(".mdb")) return what + "; import the LMDB environment with: zrec append-lmdb STORE DIR";
  return what;
}

Status run_info(const InfoArgs& a, const GlobalOptions& g) {
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));
  if (is_store_dir(a.path, g.read_context(a.path))) {
    ZREC_ASSIGN_OR_RETURN(StoreSummary s, summarize(a.path, g, a.dims, a.exact));
    if (a.json) {
      JsonWriter j;
      to_json(j, s, g);
      ZREC_RETURN_IF_ERROR(out.write(j.str() + "\n"));
    } else {
      ZREC_RETURN_IF_ERROR(out.write(to_text(s, a.shards)));
    }
    return out.flush();
  }
  struct stat st;
  if (!is_url(a.path) && ::stat(a.path.c_str(), &st) != 0) return not_found("'" + a.path + "' does not exist");
  if (!is_url(a.path) && S_ISREG(st.st_mode)) return invalid_argument(not_a_store_file(a.path));
  ZREC_ASSIGN_OR_RETURN(const Dataset ds, Dataset::open(a.path, {}, g.read_context(a.path)));
  const std::vector<std::string>& names = ds.stores();
  if (ds.empty()) return not_found("'" + redact_url(a.path) + "' is not a zrecord store and holds none");
  // In a root append-tar marked, a name outside the stream name rule is one append-tar and
  // cat --format tar will refuse: say so here. (A directory of unrelated stores may name
  // its stores as it likes.)
  if (ds.marked())
    for (const auto& name : names)
      if (const std::string why = stream_name_problem(name); !why.empty())
        spdlog::warn("'{}' cannot be a stream of '{}': {}; append-tar and cat --format tar refuse this root", name,
                     a.path, why);
  std::vector<StoreSummary> streams;
  std::map<std::string, uint64_t> lengths;
  for (const auto& name : names) {
    ZREC_ASSIGN_OR_RETURN(StoreSummary s, summarize(ds.path_of(name), g, a.dims, a.exact));
    lengths[name] = s.length;
    streams.push_back(std::move(s));
  }
  // Lengths are compared only in a root append-tar marked: elsewhere the stores are unrelated.
  const std::vector<RootProblem> problems = root_problems(ds, lengths);
  // Stores not committed yet: no problem of the root.
  const std::vector<RootNote> unadopted = unadopted_notes(ds, lengths);
  std::optional<DatasetCard> card;  // zrec card: what the data means
  if (ds.marked()) {
    ZREC_ASSIGN_OR_RETURN(card, read_dataset_card(a.path, g.read_context(a.path)));
  }
  if (a.json) {
    JsonWriter j;
    j.begin_object().key("path").value(redact_url(a.path)).key("streams").begin_object();
    for (size_t i = 0; i < names.size(); ++i) {
      j.key(names[i]);
      to_json(j, streams[i], g);
    }
    j.end_object().key("marked").value(ds.marked());
    if (ds.marked()) {
      j.key("committed_length").value(ds.length()).key("lengths_agree").value(problems.empty());
      j.key("problems").begin_array();
      for (const auto& p : problems)
        j.begin_object().key("rule").value(p.key).key("text").value(redact_urls_in(p.text)).end_object();
      j.end_array().key("unadopted").begin_array();
      for (const auto& n : unadopted) j.value(n.name);
      j.end_array();
      j.key("card");
      if (card) j.raw(card_json(*card, /*pretty=*/false));
      else j.null();
    }
    j.end_object();
    ZREC_RETURN_IF_ERROR(out.write(j.str() + "\n"));
    return out.flush();
  }
  std::string t = fmt::format("{:<16}{:<8}{:<12}{:<14}{:<10}{:>12}{:>14}{:>9}\n", ds.marked() ? "stream" : "store",
                              "kind", "dtype", "shape", "codec", "length", "payload", "ratio");
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& s = streams[i];
    const std::string shape =
        s.schema.item_shape ? shape_to_string(*s.schema.item_shape) : "ndim=" + std::to_string(s.schema.ndim);
    t += fmt::format("{:<16}{:<8}{:<12}{:<14}{:<10}{:>12}{:>14}{:>8.2f}x\n", printable(names[i]), schema_kind(s.schema),
                     s.schema.dtype.str(), shape, s.codec, s.length, s.payload_bytes, s.ratio());
  }
  for (size_t i = 0; i < names.size(); ++i)
    if (streams[i].writer_active)
      t += fmt::format("{}: a writer is appending; this is the last published state\n", printable(names[i]));
  if (!ds.marked()) {
    t += unmarked_note(names.size()) + "\n";
  } else {
    t += fmt::format("root ({}): {} stream{}, {} samples committed", kRootMarkerFile, ds.streams().size(),
                     ds.streams().size() == 1 ? "" : "s", ds.length());
    t += problems.empty() ? "; lengths agree\n" : "\n";
    for (const auto& p : problems) t += "problem: " + redact_urls_in(p.text) + "\n";
    for (const auto& n : unadopted) t += "note: " + redact_urls_in(n.text) + "\n";
    if (card) t += "card (" + std::string(kCardFile) + "): " + printable(card_summary(*card)) + "\n";
  }
  ZREC_RETURN_IF_ERROR(out.write(t));
  return out.flush();
}

}  // namespace

Command register_info(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<InfoArgs>();
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = root.add_subcommand("info", "Describe stores, or each store in a directory of named streams");
  cmd->add_option("store", *paths,
                  "Stores, or directories whose subdirectories are stores (in a root append-tar built, "
                  "marked by zrec-root, their lengths are checked against its committed samples); each is "
                  "described on its own, and the exit status is the worst")
      ->required();
  cmd->add_flag("--json", args->json, "Print one JSON object on stdout (one line per path)");
  cmd->add_flag("--exact", args->exact,
                "A remote store (URL): statistics from its whole table, not a sample of 2048 records");
  cmd->add_flag("--dims", args->dims,
                "Ragged, ndim > 1: statistics of each dimension (reads and decodes every record)");
  cmd->add_flag("--shards", args->shards, "Add a table of the data shards (records, payload, logical and file bytes)");
  return Command{cmd,
                 [args, paths, &global]() {
                   return for_each_path_of(
                       "info", *args, *paths, [&](const InfoArgs& one) { return run_info(one, global); },
                       exit_code_for);
                 },
                 nullptr, [] { return true; }};
}

}  // namespace zrec::cli
