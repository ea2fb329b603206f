// `zrec cat --format tar`: the selected samples of a root of named streams (or of one
// store) as a WebDataset tar, the reverse of append-tar.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zrec/status.h"

#include "cli/app/command.h"
#include "cli/formats/selection.h"

namespace zrec::cli {

struct CatTarArgs {
  std::string path = {};          // a root of named streams, or one store
  std::string selection = {};     // as cat's SELECTION
  std::string indices_from = {};  // as cat's --indices-from
  std::string keys = {};          // --keys FILE: sample keys, one line per record (as append-tar writes)
  std::string output = "-";
  bool force = false;
  uint64_t window_mib = 0;
  bool absolute_names = false;          // --absolute-names: keep keys that are absolute or hold '..'
  uint64_t maxcount = 0;                // --maxcount N: shards of at most N samples (0: one tar)
  uint64_t maxsize = 0;                 // --maxsize BYTES: shards of at most BYTES of tar (0: no limit)
  std::optional<uint64_t> sample = {};  // --sample N --distinct: N different samples, in draw order
  bool shuffle = false;                 // --shuffle: the selection in a seeded random order
  uint64_t seed = 0;                    // --seed K
  bool with_ids = false;                // --with-ids: an "<key>.id" member holding the record ID
  bool arrays_as_text = false;          // --arrays text: every number stream as text (the old members)
};

// Writes members "<key>.<ext>" per sample, in selection order: one per stream of the
// root (ext = the stream's name), or one per record of a single store (ext = the
// store's directory name). key: the record ID zero-padded to max(6, digits of the
// length), or the --keys file's line. A stream's records become what append-tar reads
// back into the same stream (tar_member_kind):
//   - Ragged ndim-1 '|u1' records: their bytes, "<key>.<ext>";
//   - Dense scalar and Ragged ndim-1 '<i8' and '<f8' records (what append-tar --parse
//     EXT=int|ints|float|floats makes): their numbers as text, space-separated;
//   - every other record: a .npy file of the array, "<key>.<ext>.npy", which
//     WebDataset's default decoders load as a NumPy array (any member name ending in
//     ".npy") and append-tar reads back byte-exact.
// With arrays_as_text, as before arrays: '|u1' records as their bytes, integer and
// float records as their numbers (their shape lost), other dtypes refused.
// Keys that are absolute or have a ".." component are refused (as GNU tar refuses to
// extract them) unless absolute_names. The stream names follow the rule of
// cli/formats/stream_name.h; a root holding a store whose name breaks it is refused.
// With maxcount or maxsize the samples go to shards named by the -o pattern
// (cli/formats/shard_pattern.h), a new one before a sample that would pass a limit; a
// sample larger than maxsize alone gets a shard of its own.
// With with_ids, each sample also gets a member "<key>.id" holding its record ID in
// decimal (webdataset decodes an .id member as an int, as it does .cls; append-tar
// --parse id=int reads it back as a Dense scalar stream); a stream named "id" is then
// refused, as its members would take the same names.
Status cat_tar(const CatTarArgs& a, const GlobalOptions& g);

// The selection (SELECTION, --indices-from, or all `length` records) as runs of IDs,
// never expanded (cat of billions of records stays within its window); with
// --indices-from, the runs are positions in `list`, which receives its IDs. A bad
// SELECTION, or both given, is a UsageError.
Result<std::vector<IdRun>> selected_runs(const CatTarArgs& a, uint64_t length, std::vector<uint64_t>& list);

}  // namespace zrec::cli
