// zrec info: describe a store, or every store (named stream) in a directory.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <fmt/format.h>

#include "store/store_files.h"
#include "zrec/cli_util.h"
#include "zrec/commands.h"
#include "zrec/console.h"
#include "zrec/json.h"
#include "zrec/store.h"

namespace zrec::cli {

namespace {

struct InfoArgs {
  std::string path;
  bool json = false;
};

struct StoreSummary {
  std::string path;
  std::string kind, dtype, codec;
  uint32_t ndim = 0, shards = 0;
  std::optional<std::vector<uint64_t>> item_shape;
  uint64_t length = 0, logical_bytes = 0, payload_bytes = 0, disk_bytes = 0, dict_bytes = 0;
  std::vector<std::pair<std::string, uint64_t>> files;
  double ratio() const { return payload_bytes ? double(logical_bytes) / double(payload_bytes) : 1.0; }
};

Result<StoreSummary> summarize(const std::string& path, const GlobalOptions& g) {
  ZREC_ASSIGN_OR_RETURN(auto store, Store::open(path, {.threads = g.threads, .wait = g.wait}));
  StoreSummary s;
  s.path = path;
  const Schema& schema = store->schema();
  s.kind = schema.is_dense() ? "dense" : "ragged";
  s.dtype = schema.dtype.str();
  s.ndim = schema.ndim;
  s.item_shape = schema.item_shape;
  s.codec = to_string(store->codec());
  s.shards = store->data_shards();
  s.length = store->length();
  s.dict_bytes = store->dict_bytes();
  for (uint32_t shard = 0; shard < s.shards; ++shard) s.payload_bytes += store->tail(shard);
  s.files = store->file_sizes();
  for (const auto& f : s.files) s.disk_bytes += f.second;
  // Logical bytes come from the table: one sequential pass, 1 MiB at a time.
  constexpr uint64_t kChunk = 65536;
  std::vector<RecordLoc> locs(std::min(kChunk, s.length));
  for (uint64_t first = 0; first < s.length; first += kChunk) {
    const uint64_t n = std::min(kChunk, s.length - first);
    ZREC_RETURN_IF_ERROR(store->read_locs(first, n, locs.data()));
    for (uint64_t k = 0; k < n; ++k) s.logical_bytes += locs[k].logic_length;
  }
  return s;
}

void to_json(JsonWriter& j, const StoreSummary& s) {
  j.begin_object();
  j.key("path").value(s.path);
  j.key("kind").value(s.kind);
  j.key("dtype").value(s.dtype);
  j.key("ndim").value(uint64_t{s.ndim});
  j.key("item_shape");
  if (s.item_shape) {
    j.begin_array();
    for (uint64_t d : *s.item_shape) j.value(d);
    j.end_array();
  } else {
    j.null();
  }
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
  j.end_object();
}

std::string human_bytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(n);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {} ({} bytes)", v, units[u], n);
}

std::string to_text(const StoreSummary& s) {
  std::string t;
  auto line = [&](const char* k, const std::string& v) { t += fmt::format("{:<14}{}\n", k, v); };
  line("store", s.path);
  line("kind", s.kind);
  line("dtype", s.dtype);
  line("ndim", std::to_string(s.ndim));
  line("item_shape", s.item_shape ? shape_to_string(*s.item_shape) : "-");
  line("codec", s.codec);
  line("shards", std::to_string(s.shards));
  line("length", std::to_string(s.length));
  line("logical", human_bytes(s.logical_bytes));
  line("payload", human_bytes(s.payload_bytes));
  line("on disk", human_bytes(s.disk_bytes));
  line("ratio", fmt::format("{:.2f}x (logical / payload)", s.ratio()));
  line("dictionary", s.dict_bytes ? human_bytes(s.dict_bytes) : "-");
  std::string files;
  for (const auto& f : s.files) files += fmt::format("{}{} {}", files.empty() ? "" : ", ", f.first, f.second);
  line("files", files);
  return t;
}

uint64_t shortest_length(const std::vector<StoreSummary>& streams) {
  uint64_t n = UINT64_MAX;
  for (const auto& s : streams) n = std::min(n, s.length);
  return n;
}

bool is_store_dir(const std::string& path) {
  struct stat st;
  return ::stat(store::join_path(path, "meta.zr").c_str(), &st) == 0;
}

// Subdirectories of `root` that hold a meta.zr, sorted by name.
std::vector<std::string> child_stores(const std::string& root) {
  std::vector<std::string> out;
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    // A store create_store was building when killed (".NAME.zrec-tmp-XXXXXX"): not a stream.
    if (name.starts_with('.') && name.find(".zrec-tmp-") != std::string::npos) continue;
    if (is_store_dir(store::join_path(root, name))) out.push_back(name);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

Status run_info(const InfoArgs& a, const GlobalOptions& g) {
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));
  if (is_store_dir(a.path)) {
    ZREC_ASSIGN_OR_RETURN(StoreSummary s, summarize(a.path, g));
    if (a.json) {
      JsonWriter j;
      to_json(j, s);
      ZREC_RETURN_IF_ERROR(out.write(j.str() + "\n"));
    } else {
      ZREC_RETURN_IF_ERROR(out.write(to_text(s)));
    }
    return out.flush();
  }
  struct stat st;
  if (::stat(a.path.c_str(), &st) != 0) return not_found("'" + a.path + "' does not exist");
  const auto names = child_stores(a.path);
  if (names.empty()) return not_found("'" + a.path + "' is not a zrecord store and holds none");
  std::vector<StoreSummary> streams;
  for (const auto& name : names) {
    ZREC_ASSIGN_OR_RETURN(StoreSummary s, summarize(store::join_path(a.path, name), g));
    streams.push_back(std::move(s));
  }
  const bool agree = std::all_of(streams.begin(), streams.end(),
                                 [&](const StoreSummary& s) { return s.length == streams.front().length; });
  if (a.json) {
    JsonWriter j;
    j.begin_object().key("path").value(a.path).key("streams").begin_object();
    for (size_t i = 0; i < names.size(); ++i) {
      j.key(names[i]);
      to_json(j, streams[i]);
    }
    j.end_object().key("lengths_agree").value(agree).end_object();
    ZREC_RETURN_IF_ERROR(out.write(j.str() + "\n"));
    return out.flush();
  }
  std::string t = fmt::format("{:<16}{:<8}{:<12}{:<14}{:<10}{:>12}{:>14}{:>9}\n", "stream", "kind", "dtype",
                              "shape", "codec", "length", "payload", "ratio");
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& s = streams[i];
    const std::string shape = s.item_shape ? shape_to_string(*s.item_shape) : "ndim=" + std::to_string(s.ndim);
    t += fmt::format("{:<16}{:<8}{:<12}{:<14}{:<10}{:>12}{:>14}{:>8.2f}x\n", names[i], s.kind, s.dtype, shape,
                     s.codec, s.length, s.payload_bytes, s.ratio());
  }
  t += agree ? fmt::format("lengths agree: all {} streams hold {} records\n", names.size(), streams.front().length)
             : fmt::format("lengths DISAGREE across streams (shortest {}): a run stopped between the streams' "
                           "publications; the next append-tar into this root cuts the longer ones back to {}\n",
                           shortest_length(streams), shortest_length(streams));
  ZREC_RETURN_IF_ERROR(out.write(t));
  return out.flush();
}

}  // namespace

Command register_info(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = root.add_subcommand("info", "Describe a store, or each store in a directory of named streams");
  cmd->add_option("store", args->path, "A store, or a directory whose subdirectories are stores")->required();
  cmd->add_flag("--json", args->json, "Print one JSON object on stdout");
  cmd->footer(
      "Examples:\n"
      "  zrec info tokens/\n"
      "  zrec info --json tokens/ | python3 -m json.tool\n"
      "  zrec info dataset/        # dataset/joint, dataset/label, dataset/token");
  return Command{cmd, [args, &global]() { return run_info(*args, global); }};
}

}  // namespace zrec::cli
