// `zrec bench STORE`: random IID gathers on an existing store beside its baselines.
#include <fcntl.h>

#include "bench_internal.h"

namespace zrec::bench {

Result<StoreBenchResult> bench_store(const std::string& path, const StoreBenchOptions& o, const Context& ctx_in) {
  auto say = [&](const std::string& what) { ctx_in.control.report({.phase = what.c_str()}); };
  Context ctx = ctx_in;
  if (!ctx.lanes) ctx.lanes = std::make_shared<Lanes>(read_lane_budget());
  const std::shared_ptr<Lanes> lanes = ctx.lanes;
  ZREC_ASSIGN_OR_RETURN(auto store, Store::open(path, {}, ctx));
  if (store->length() == 0) return invalid_argument("store '" + path + "' holds no records to gather");
  StoreBenchResult r;
  r.path = path;
  r.schema = store->schema();
  r.codec = store->codec();
  r.records = store->length();
  r.batch = o.batch;
  r.lanes = lanes->count();
  r.cold = o.cold;
  for (const auto& f : store->file_sizes()) r.disk_bytes += f.second;
  say("reading the record table");
  ZREC_ASSIGN_OR_RETURN(StoredTable table, load_stored_table(*store));
  r.logical_bytes = table.logical_bytes;
  r.payload_bytes = table.payload_bytes;
  if (o.cold) ZREC_RETURN_IF_ERROR(evict_directory(path, true));

  std::vector<std::unique_ptr<Measurement>> owned;
  owned.push_back(make_pread_limit(table, *lanes, r.batch, o.cold ? path : ""));
  ZREC_ASSIGN_OR_RETURN(auto gather, make_store_gather(path, ctx, r.batch, table.max_logic, o.cold));
  owned.push_back(std::move(gather));
  const bool in_memory = r.payload_bytes <= o.memory_limit;
  if (in_memory) {
    Status st;
    say("loading the stored frames into memory");
    std::shared_ptr<codec::Dictionary> dict;
    if (r.codec == Codec::kZstdDict) {
      // The reader holds the dictionary privately; load dict.zr again for the baseline.
      io::File f;
      ZREC_ASSIGN_OR_RETURN(f, io::File::open(path + "/dict.zr", O_RDONLY));
      ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
      std::vector<uint8_t> bytes(size);
      ZREC_RETURN_IF_ERROR(f.pread_exact(bytes.data(), size, 0));
      ZREC_ASSIGN_OR_RETURN(dict, codec::Dictionary::load(std::move(bytes)));
    }
    owned.push_back(make_memory_decode(table, r.codec, dict, *lanes, r.batch, &st));
    ZREC_RETURN_IF_ERROR(st);
  }
  std::vector<Measurement*> ms;
  for (auto& m : owned) ms.push_back(m.get());
  say("gathering");
  ZREC_ASSIGN_OR_RETURN(auto results,
                        run_interleaved(ms, {r.records, r.batch, o.seconds, o.rounds, o.seed, ctx.control}));
  r.pread_limit = results[0];
  r.gather = results[1];
  if (in_memory) r.mem_decode = results[2];
  return r;
}

}  // namespace zrec::bench
