// read_table_stats (table_stats.h).
#include "cli/report/table_stats.h"

#include <algorithm>

namespace zrec::cli {

namespace {

// The first RecordLoc of each sample piece: evenly spread, the first at 0, the last at the end.
std::vector<uint64_t> sample_piece_starts(uint64_t length) {
  std::vector<uint64_t> starts;
  const uint64_t last = length - kSamplePiece;
  for (uint64_t i = 0; i < kSamplePieces; ++i) starts.push_back(last * i / (kSamplePieces - 1));
  return starts;
}

}  // namespace

Result<TableStats> read_table_stats(Store& store, bool exact, const std::function<void(uint64_t)>& progress) {
  const Schema& schema = store.schema();
  const uint64_t length = store.length();
  const uint32_t shards = store.data_shards();
  const uint64_t prefix = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
  TableStats t;
  if (!schema.is_dense()) t.elements.emplace();
  t.shard_records.assign(shards, 0);
  t.shard_logical.assign(shards, 0);
  auto add = [&](uint64_t id, const RecordLoc& loc) {
    t.logical.add(loc.logic_length);
    t.stored.add(loc.phys_length);
    if (t.elements) t.elements->add((loc.logic_length - prefix) / schema.dtype.itemsize);
    ++t.shard_records[id % shards];
    t.shard_logical[id % shards] += loc.logic_length;
  };
  if (store.is_remote() && !exact && length > kSamplePieces * kSamplePiece) {
    std::vector<RecordLoc> locs(kSamplePiece);
    for (uint64_t first : sample_piece_starts(length)) {
      ZREC_RETURN_IF_ERROR(store.read_locs(first, kSamplePiece, locs.data()));
      for (uint64_t k = 0; k < kSamplePiece; ++k) add(first + k, locs[k]);
    }
    t.sampled = kSamplePieces * kSamplePiece;
    // The table's totals, scaled from the sample (exact for Dense: every record is as wide).
    for (uint32_t shard = 0; shard < shards; ++shard) {
      const uint64_t records = length / shards + (shard < length % shards ? 1 : 0);
      const uint64_t seen = t.shard_records[shard];
      t.shard_logical[shard] = seen ? static_cast<uint64_t>(static_cast<double>(t.shard_logical[shard]) /
                                                            static_cast<double>(seen) * static_cast<double>(records))
                                    : 0;
      t.shard_records[shard] = records;
      t.logical_bytes += t.shard_logical[shard];
    }
    if (schema.is_dense()) t.logical_bytes = length * t.logical.max();
    return t;
  }
  constexpr uint64_t kChunk = 65536;  // RecordLocs per read: 1 MiB
  std::vector<RecordLoc> locs(std::min(kChunk, length));
  for (uint64_t first = 0; first < length; first += kChunk) {
    const uint64_t n = std::min(kChunk, length - first);
    ZREC_RETURN_IF_ERROR(store.read_locs(first, n, locs.data()));
    for (uint64_t k = 0; k < n; ++k) add(first + k, locs[k]);
    if (progress) progress(first + n);
  }
  t.logical_bytes = t.logical.total();
  return t;
}

}  // namespace zrec::cli
