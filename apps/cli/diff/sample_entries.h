// A sample as a fixed-width entry for an external sort (entry_sort.h), shared by
// `zrec diff --by-key` (entries led by the key record's hash) and `zrec duplicates`
// (led by the grouped stream's hash): the lead hash (16 bytes), the sample's ID (8,
// big-endian, so that memcmp orders equal leads by ID), then a 16-byte record hash per
// other stream. 128 bits tell records apart as surely as 256 here (a collision needs
// some 2^64 records).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "zrec/status.h"

#include "cli/diff/diff_side.h"
#include "cli/diff/diff_walk.h"
#include "cli/diff/entry_sort.h"

namespace zrec::cli {

inline constexpr size_t kEntryHashBytes = 16;

// Where the hash of stream `s` (an index into WalkOptions::streams) starts in an entry.
constexpr size_t entry_stream_offset(size_t s) { return kEntryHashBytes + 8 + kEntryHashBytes * s; }
// The width of an entry with `streams` hashes after the ID.
constexpr size_t entry_width(size_t streams) { return entry_stream_offset(streams); }

uint64_t entry_id(const uint8_t* entry);

// The hash of stream `s` (an index into WalkOptions::streams) in `entry`.
inline const uint8_t* entry_stream_hash(const uint8_t* entry, size_t s) { return entry + entry_stream_offset(s); }

// Every sample of `side` into `sorter`, a chunk at a time: led by its record of stream
// `lead`, followed by its records of options.streams. Ends with sorter.finish().
Status feed_entries(const DiffSide& side, const std::string& lead, EntrySorter& sorter, const WalkOptions& options);

}  // namespace zrec::cli
