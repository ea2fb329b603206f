// What a store's RecordLoc table says of its records' sizes, for `zrec info` and `zrec
// view`'s overview: one pass over the table (no payload read), or for a remote store
// (docs/remote.md) a sample of it, so that describing a store by URL transfers a few
// KiB whatever its length.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "zrec/store.h"

#include "cli/report/record_stats.h"

namespace zrec::cli {

// A remote store's statistics come from this many RecordLocs unless exact: pieces of
// 256 (4 KiB of table, one request each) spread evenly over the table, the first of
// which came with the store's first request. 2,048 records keep the percentiles within
// a few percent and an info of any store under 64 KiB transferred.
inline constexpr uint64_t kSamplePieces = 8;
inline constexpr uint64_t kSamplePiece = 256;

struct TableStats {
  SizeStats stored, logical;
  std::optional<SizeStats> elements;    // Ragged: elements per record (prod of dims)
  std::vector<uint64_t> shard_records;  // per data file
  std::vector<uint64_t> shard_logical;  // per data file: logical bytes (scaled from the sample)
  uint64_t logical_bytes = 0;           // the store's (scaled from the sample; exact for Dense)
  uint64_t sampled = 0;                 // the records the statistics come from, when not all
};

// Reads the table of `store`: all of it, or a sample when the store is remote and not
// `exact`. `progress(records)` (optional) after each MiB of a whole table.
Result<TableStats> read_table_stats(Store& store, bool exact, const std::function<void(uint64_t)>& progress = nullptr);

}  // namespace zrec::cli
