// Copying records between stores: recompressing one source, or joining
// several into one. Records keep their order and their logical bytes; only the
// codec, dictionary, level and shard count may change. When source and destination
// share codec and dictionary, stored frames are copied verbatim (no decode, no encode).
//
// Example (a reshard to 8 data files, frames copied):
//   ZREC_ASSIGN_OR_RETURN(auto src, zrec::Store::open("tokens/"));
//   zrec::CreateOptions create{.schema = src->schema(), .codec = src->codec(),
//                              .data_shards = 8, .dictionary = src->dictionary()};
//   zrec::TransferStats stats;
//   ZREC_RETURN_IF_ERROR(zrec::build_from_stores({src.get()}, "tokens8/", create, {}, {}, &stats));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/store.h"
#include "zrec/store_writer.h"

namespace zrec {

struct TransferStats {
  uint64_t records = 0;              // records appended to the destination
  uint64_t logical_bytes = 0;        // their logic_length total
  uint64_t source_stored_bytes = 0;  // their phys_length total in the sources
  uint64_t frames_copied = 0;        // records whose stored bytes were copied verbatim
  uint64_t records_recoded = 0;      // records decoded and encoded again
  uint64_t sources_copied = 0;       // sources that took the frame-copy path
  uint64_t stored_bytes = 0;         // the destination's stored bytes afterwards (build_from_stores)
};

struct TransferOptions {
  // Memory budget of one window: stored bytes (frame copy) or logical bytes (re-encode).
  // Default 64 MiB; at least one record per window. Peak memory is about one window
  // plus the writer's per-lane scratch (lanes x chunk_bytes). Frame copy uses at most
  // 8 MiB of it: a larger window is not faster there.
  uint64_t window_bytes = kDefaultWindowBytes;
  // Copy stored frames when the codec and dictionary bytes of source and destination
  // are equal. Default true; set false to re-encode anyway (e.g. at an explicit level).
  bool frame_copy = true;
  // Frame copy writes the stored bytes kernel-side (copy_file_range from the source's
  // data files, one call per run of adjacent records) instead of from user memory; a
  // raw Dense source, whose checks need no stored byte, is then not read at all.
  // Default true; false writes from the buffer the bytes were read and checked in.
  bool kernel_copy = true;
  // Copies only each source's first `max_records` records (a root's committed samples:
  // records past them belong to a run that never committed).
  uint64_t max_records = UINT64_MAX;
  // IDs left out of the copy (for instance a drop list of duplicates),
  // ascending without repeats, counted in each source (build_root: in each part); the
  // records kept close up in order. Empty: none.
  std::vector<uint64_t> skip_ids;
};

// How many of `options.skip_ids` fall below `records`: the records of a source's first
// `records` that a copy leaves out.
uint64_t skipped_below(const TransferOptions& options, uint64_t records);

// "" when the schemas are equal; otherwise what differs, e.g. "dtype '<i4' vs '<i8'",
// "Dense (28, 28) vs Ragged ndim=2", "item_shape (28, 28) vs (32, 32)", "ndim 1 vs 2".
std::string schema_difference(const Schema& a, const Schema& b);

// True when src's records can be copied into dst frame for frame: the same codec and,
// for zstd_dict, byte-identical dictionaries.
bool frames_compatible(const Store& src, const StoreWriter& dst);

// Appends every record of `src` to `dst`, in order, in windows of bounded memory:
// frame copy (Store::read_stored + StoreWriter::append_encoded) when
// frames_compatible() and options.frame_copy, else decode (Store::scan, all lanes) and
// encode (StoreWriter::append, all lanes). The schemas must be equal (kInvalidArgument
// naming the difference). Adds to *stats. Nothing is published.
// ctx.control is checked between windows (kCancelled "interrupted") and hears, from the
// calling thread after every window, the records appended so far and their logical
// bytes (running totals over every source of build_from_stores; no totals); the rest of
// TransferStats is the result, in *stats.
Status append_store(Store& src, StoreWriter& dst, const TransferOptions& options, TransferStats* stats,
                    const Context& ctx = {});

// Builds a new store at `dst` (build_store: temporary sibling, renamed into place when
// complete; `dst` must not exist) holding the records of `sources` one after another.
// Every source's schema must equal create.schema (kInvalidArgument: "schema of 'b/'
// differs from 'a/': ..."). On any error nothing is left at `dst`. The writer runs in
// `ctx` (build_store), which append_store's windows check and report to.
Status build_from_stores(const std::vector<Store*>& sources, const std::string& dst, const CreateOptions& create,
                         const WriterOptions& writer, const TransferOptions& options, TransferStats* stats,
                         const Context& ctx = {});

// --- roots of named streams (zrec/dataset.h) ------------------------------------------
// One stream of a root being built: its name, how its store is created, and its parts,
// each the first `records` records of a store, one after another.
struct StreamPart {
  Store* store = nullptr;
  uint64_t records = 0;
};
struct RootStreamPlan {
  std::string name;
  CreateOptions create;
  std::vector<StreamPart> parts;
};

// Builds a new root at `dst` (which must not exist: kAlreadyExists, as for a store) with
// `streams` (sorted by name, each passing stream_name_problem, all of one total length):
// in a temporary sibling ".NAME.zrec-tmp-XXXXXX", every stream is built (build_store),
// then the marker committing their length is written and synced, and only then is the
// directory renamed into place (RENAME_NOREPLACE) and its parent synced. So DST appears
// whole, its marker already committed, or not at all; on any error nothing is left.
// Adds to *stats (stored_bytes: every stream's).
// `card` (the bytes of a dataset card, zrec/dataset.h) goes into DST with its streams,
// so it appears with them.
Status build_root(const std::string& dst, const std::vector<RootStreamPlan>& streams, const WriterOptions& writer,
                  const TransferOptions& options, TransferStats* stats,
                  const std::optional<std::string>& card = std::nullopt, const Context& ctx = {});

}  // namespace zrec
