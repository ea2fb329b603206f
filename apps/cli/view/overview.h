// The overview of one store for `zrec view`: what `zrec info --json` says of it (the same
// keys, docs/json.md), and with each record-size statistic the bins of a histogram to
// draw. Everything comes from the RecordLoc table, read 1 MiB at a time: no payload is
// read, so a store of a million records opens in the time its table takes to read.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "zrec/status.h"
#include "zrec/store.h"

#include "cli/report/json.h"
#include "cli/view/line_list.h"

namespace zrec::cli::view {

// Bins of each drawn histogram (fewer when the sizes span fewer values).
inline constexpr size_t kHistogramBins = 60;

// Writes one JSON object: "name", the schema keys, "codec", "shards", "length",
// "logical_bytes", "payload_bytes", "disk_bytes", "compression_ratio", "dict_bytes",
// "dict_id", "checksum", "writer_active", and "record_sizes" with "stored", "logical"
// (and "elements" for Ragged), each {"min", "p50", "p99", "max", "histogram": {"scale",
// "edges", "counts"}}; for Ragged also "dims", one such object per dimension, as
// `info --dims`: from the table for ndim 1 (the one dimension is the element count), and
// for ndim > 1 only with `dims`, which reads every record's shape prefix (a scan in
// windows of kDimsWindowBytes; a signal to the command stops it, kCancelled).
inline constexpr uint64_t kDimsWindowBytes = uint64_t{16} << 20;
//
// A Dense store of one integer (or bool) per record, a label stream, also gets
// "values": {"sampled", "distinct", "counts": [{"value", "count", "name"?}, ...]}, the
// count of each value among its first kValueSample records (read, unlike the rest),
// sorted by value, while they take at most kMaxDistinctValues values ("counts" null
// past that); "name" is names[value] when `names` (view --labels) has one. A stream of
// decimal text (Ragged |u1, WebDataset's .cls) that `names` are given for counts too:
// each record's integer (a record that holds none is not counted).
inline constexpr uint64_t kValueSample = uint64_t{1} << 20;
// A remote store's (docs/remote.md): 1 MiB of table and its records, not 16.
inline constexpr uint64_t kRemoteValueSample = uint64_t{1} << 16;
inline constexpr size_t kMaxDistinctValues = 256;
Status write_store_overview(JsonWriter& j, const std::string& name, Store& store, bool dims,
                            const LineList* names = nullptr);

}  // namespace zrec::cli::view
