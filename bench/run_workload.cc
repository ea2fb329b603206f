// One workload end to end: build a store per codec (timing the writes beside the
// in-memory encode baseline), then interleave the gathers with their baselines.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zrec/store_writer.h"

#include "bench_internal.h"

namespace zrec::bench {

namespace {

std::string temp_parent(const std::string& dir) {
  if (!dir.empty()) return dir;
  const char* t = std::getenv("TMPDIR");
  return t != nullptr && *t != '\0' ? t : "/tmp";
}

// Removes the temporary directory (and the stores in it) unless asked to keep it.
class TempStores {
 public:
  TempStores(std::string path, bool keep) : path_(std::move(path)), keep_(keep) {}
  ~TempStores() {
    std::error_code ec;
    if (!keep_ && !path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  bool keep_;
};

Result<std::string> make_temp_dir(const std::string& parent, Workload w) {
  std::string tmpl = parent + "/zrec-bench-" + to_string(w) + "-XXXXXX";
  if (!io::make_temp_dir(tmpl)) return io::errno_status(errno, "cannot create a directory in", parent);
  return tmpl;
}

uint64_t disk_bytes(const Store& store) {
  uint64_t total = 0;
  for (const auto& f : store.file_sizes()) total += f.second;
  return total;
}

// create_store, then StoreWriter open / append in 64 MiB windows / close; the
// writer's part is timed (create is a fixed cost of a few small files).
// codec_auto: the store is created with `--codec auto` and `codec` is ignored.
Result<Throughput> write_store(const std::string& path, const Corpus& corpus, Codec codec,
                               const std::vector<uint8_t>& dictionary, const RunOptions& o, const Control& control,
                               bool codec_auto = false) {
  CreateOptions co;
  co.schema = corpus.schema;
  co.codec = codec_auto ? Codec::kZstd : codec;
  co.codec_auto = codec_auto;
  co.data_shards = o.data_shards;
  if (codec == Codec::kZstdDict && !codec_auto) co.dictionary = dictionary;
  ZREC_RETURN_IF_ERROR(create_store(path, co));
  const auto t0 = Clock::now();
  WriterOptions wo;
  wo.sync = o.sync;
  ZREC_ASSIGN_OR_RETURN(auto writer, StoreWriter::open(path, wo, Context{.lanes = o.write_lanes}));
  const uint64_t n = corpus.records();
  for (uint64_t first = 0; first < n;) {
    ZREC_RETURN_IF_ERROR(control.check());
    uint64_t end = first, bytes = 0;
    while (end < n && (end == first || bytes + corpus.logic_length(end) <= kDefaultWindowBytes))
      bytes += corpus.logic_length(end++);
    ZREC_RETURN_IF_ERROR(writer->append(corpus.refs(first, end - first)));
    first = end;
  }
  ZREC_RETURN_IF_ERROR(writer->close());
  Throughput t;
  t.seconds = seconds_since(t0);
  t.records = n;
  t.bytes = corpus.logical_bytes();
  t.batches = 1;
  t.measured = true;
  return t;
}

Throughput add(Throughput a, const Throughput& b) {
  a.records += b.records;
  a.bytes += b.bytes;
  a.seconds += b.seconds;
  a.measured = a.measured || b.measured;
  return a;
}

}  // namespace

namespace {

// Writes a store of each codec of `build` under `tmp`, each write bracketed by the
// in-memory encode baseline (before and after).
Result<std::vector<CodecResult>> write_stores(const std::vector<Codec>& build, const Corpus& corpus,
                                              const RunOptions& o, const Control& control, const std::string& tmp,
                                              const std::vector<uint8_t>& dict_bytes,
                                              const std::shared_ptr<codec::Dictionary>& dictionary,
                                              const std::function<void(const std::string&)>& say) {
  // Each side of the bracket encodes for up to `seconds` (2 s by default), or the corpus.
  const double encode_seconds = std::min(2.0, std::max(0.01, o.seconds));
  std::vector<CodecResult> built;
  for (Codec c : build) {
    CodecResult cr;
    cr.codec = c;
    cr.store_path = tmp + "/" + to_string(corpus.workload) + "-" + to_string(c);
    auto dict = c == Codec::kZstdDict ? dictionary : nullptr;
    ZREC_RETURN_IF_ERROR(control.check());
    say(std::string("encoding in memory (") + to_string(c) + ")");
    ZREC_ASSIGN_OR_RETURN(Throughput before, memory_encode(corpus, c, dict, *o.write_lanes, encode_seconds));
    say(std::string("writing the ") + to_string(c) + " store");
    ZREC_ASSIGN_OR_RETURN(cr.write, write_store(cr.store_path, corpus, c, dict_bytes, o, control));
    ZREC_RETURN_IF_ERROR(control.check());
    ZREC_ASSIGN_OR_RETURN(Throughput after, memory_encode(corpus, c, dict, *o.write_lanes, encode_seconds));
    cr.mem_encode = add(before, after);
    cr.dict_bytes = c == Codec::kZstdDict ? dict_bytes.size() : 0;
    built.push_back(std::move(cr));
  }
  return built;
}

// The `--codec auto` store: written first, then the in-memory encode of the codec it
// chose, with its dictionary (*chosen_dict: null unless zstd_dict).
Result<CodecResult> write_auto_store(const Corpus& corpus, const RunOptions& o, const Control& control,
                                     const std::string& tmp, std::shared_ptr<codec::Dictionary>* chosen_dict,
                                     const std::function<void(const std::string&)>& say) {
  CodecResult cr;
  cr.automatic = true;
  cr.store_path = tmp + "/" + to_string(corpus.workload) + "-auto";
  ZREC_RETURN_IF_ERROR(control.check());
  say("writing the auto store");
  ZREC_ASSIGN_OR_RETURN(cr.write, write_store(cr.store_path, corpus, Codec::kZstd, {}, o, control, true));
  {
    ZREC_ASSIGN_OR_RETURN(auto store, Store::open(cr.store_path, {}, {.lanes = o.read_lanes}));
    cr.codec = store->codec();
    cr.dict_bytes = store->dict_bytes();
    if (cr.codec == Codec::kZstdDict) {
      ZREC_ASSIGN_OR_RETURN(*chosen_dict, codec::Dictionary::load(store->dictionary()));
    }
  }
  ZREC_RETURN_IF_ERROR(control.check());
  say(std::string("encoding in memory (auto: ") + to_string(cr.codec) + ")");
  const double encode_seconds = std::min(2.0, std::max(0.01, o.seconds));
  ZREC_ASSIGN_OR_RETURN(cr.mem_encode, memory_encode(corpus, cr.codec, *chosen_dict, *o.write_lanes, encode_seconds));
  return cr;
}

}  // namespace

std::string codec_label(const CodecResult& c) { return c.automatic ? "auto" : to_string(c.codec); }

Result<WorkloadResult> run_workload(const RunOptions& options_in, const Corpus& corpus, const Context& ctx) {
  RunOptions o = options_in;  // with both executors made
  if (!o.read_lanes) o.read_lanes = std::make_shared<Lanes>(read_lane_budget());
  if (!o.write_lanes) o.write_lanes = std::make_shared<Lanes>(write_lane_budget());
  auto say = [&](const std::string& what) {
    const std::string phase = std::string(to_string(corpus.workload)) + ": " + what;
    ctx.control.report({.phase = phase.c_str()});
  };
  // Between phases (ctx.control.check()): a stop request ends the run (the temporary
  // stores go with it).
  WorkloadResult r;
  r.workload = corpus.workload;
  r.schema = corpus.schema;
  r.records = corpus.records();
  r.logical_bytes = corpus.logical_bytes();
  r.batch = o.batch != 0 ? o.batch : defaults(corpus.workload).batch;
  r.read_lanes = o.read_lanes->count();
  r.write_lanes = o.write_lanes->count();
  r.cold = o.cold;
  if (r.records == 0) return invalid_argument("the corpus is empty");

  // The raw store is always built: it is where the pread limit reads.
  std::vector<Codec> build = {Codec::kRaw};
  for (Codec c : o.codecs)
    if (std::find(build.begin(), build.end(), c) == build.end()) build.push_back(c);
  std::vector<uint8_t> dict_bytes;
  std::shared_ptr<codec::Dictionary> dictionary;
  if (std::find(build.begin(), build.end(), Codec::kZstdDict) != build.end()) {
    say("training a dictionary");
    ZREC_ASSIGN_OR_RETURN(dict_bytes, train_corpus_dictionary(corpus, o.write_lanes));
    ZREC_ASSIGN_OR_RETURN(dictionary, codec::Dictionary::load(dict_bytes));
  }

  // Made after the dictionary is trained (which cannot be interrupted), so from here
  // on a stop request is noticed within a batch or phase and the stores are removed.
  ZREC_RETURN_IF_ERROR(ctx.control.check());
  ZREC_ASSIGN_OR_RETURN(std::string tmp, make_temp_dir(temp_parent(o.dir), corpus.workload));
  TempStores cleanup(tmp, o.keep);

  ZREC_ASSIGN_OR_RETURN(std::vector<CodecResult> built,
                        write_stores(build, corpus, o, ctx.control, tmp, dict_bytes, dictionary, say));
  std::shared_ptr<codec::Dictionary> auto_dict;  // the auto store's, when it chose zstd_dict
  if (o.codec_auto) {
    ZREC_ASSIGN_OR_RETURN(CodecResult cr, write_auto_store(corpus, o, ctx.control, tmp, &auto_dict, say));
    built.push_back(std::move(cr));
  }
  auto dictionary_of = [&](const CodecResult& cr) {
    if (cr.codec != Codec::kZstdDict) return std::shared_ptr<codec::Dictionary>();
    return cr.automatic ? auto_dict : dictionary;
  };

  // Readers, tables and baselines.
  std::vector<std::unique_ptr<Store>> stores;
  std::vector<StoredTable> tables;
  tables.reserve(built.size());
  for (CodecResult& cr : built) {
    ZREC_ASSIGN_OR_RETURN(auto store, Store::open(cr.store_path, {}, {.lanes = o.read_lanes}));
    cr.disk_bytes = disk_bytes(*store);
    ZREC_ASSIGN_OR_RETURN(StoredTable t, load_stored_table(*store));
    cr.payload_bytes = t.payload_bytes;
    tables.push_back(std::move(t));
    stores.push_back(std::move(store));
    if (o.cold) ZREC_RETURN_IF_ERROR(evict_directory(cr.store_path, true));
  }
  std::vector<std::unique_ptr<Measurement>> owned;
  owned.push_back(make_pread_limit(tables[0], *o.read_lanes, r.batch, o.cold ? built[0].store_path : ""));
  for (size_t i = 0; i < built.size(); ++i) {
    ZREC_ASSIGN_OR_RETURN(auto gather, make_store_gather(built[i].store_path, {.lanes = o.read_lanes}, r.batch,
                                                         tables[i].max_logic, o.cold));
    owned.push_back(std::move(gather));
    Status st;
    say(std::string("loading ") + codec_label(built[i]) + " frames into memory");
    owned.push_back(
        make_memory_decode(tables[i], built[i].codec, dictionary_of(built[i]), *o.read_lanes, r.batch, &st));
    ZREC_RETURN_IF_ERROR(st);
  }
  std::vector<Measurement*> ms;
  for (auto& m : owned) ms.push_back(m.get());
  say("gathering (" + std::to_string(ms.size()) + " measurements interleaved, " + std::to_string(o.rounds) +
      " rounds)");
  ZREC_RETURN_IF_ERROR(ctx.control.check());
  LoopOptions lo{r.records, r.batch, o.seconds, o.rounds, o.seed, ctx.control};
  ZREC_ASSIGN_OR_RETURN(auto results, run_interleaved(ms, lo));
  r.pread_limit = results[0];
  for (size_t i = 0; i < built.size(); ++i) {
    built[i].gather = results[1 + 2 * i];
    built[i].mem_decode = results[2 + 2 * i];
  }
  // Report the codecs asked for, in the order asked.
  for (Codec c : o.codecs)
    for (const CodecResult& cr : built)
      if (cr.codec == c && !cr.automatic) r.codecs.push_back(cr);
  if (o.codec_auto) r.codecs.push_back(built.back());
  if (o.keep) {
    say("stores kept in " + tmp);
  } else {
    for (CodecResult& cr : r.codecs) cr.store_path.clear();  // removed on return
  }
  return r;
}

}  // namespace zrec::bench
