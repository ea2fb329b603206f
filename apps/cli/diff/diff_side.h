// One side of `zrec diff`: a store or a root (local or a URL), opened for reading, with
// what the comparison needs of it: its streams in name order, its sample count, and
// each record's content hash (include/zrec/digest.h's R_i) in chunks of IDs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zrec/digest.h"
#include "zrec/remote.h"
#include "zrec/store.h"

namespace zrec::cli {

// The stream name a lone store is compared under (two stores compare as roots of one
// stream each).
inline constexpr const char* kStoreStream = "records";

struct DiffStream {
  std::string name;
  std::unique_ptr<Store> store;
};

struct DiffSide {
  std::string path;  // as given (messages redact a URL)
  bool root = false;
  uint64_t length = 0;              // samples: a root's committed count, a store's records
  std::vector<DiffStream> streams;  // sorted by name; a lone store: one named kStoreStream

  // The stream named `name`, or nullptr.
  Store* find(const std::string& name) const;
};

// Opens `path`: a root (its zrec-root marker names the streams and the sample count;
// each stream must hold at least that many records, of which the first count) or a
// store. A path that is neither, or a stream that cannot be opened, is an error naming
// it. Every stream is opened in `ctx` (lanes, lock wait, snapshot_if_busy, remote).
Result<DiffSide> open_diff_side(const std::string& path, const Context& ctx);

// R_i of records [first, first + count) of `store`, in ID order, read through a window
// of `window_bytes`; `cancel` stops it (kCancelled).
Result<std::vector<RecordHash>> record_hashes(Store& store, uint64_t first, uint64_t count, uint64_t window_bytes,
                                              const Control& control);

// Record `id`'s payload bytes (without a Ragged record's shape prefix): a key to show.
Result<std::string> record_payload(Store& store, uint64_t id);

// " key 'K'" of sample `id` of `side` (printable), when the side keeps keys in its
// __key__ stream; "" otherwise.
std::string sample_key_words(const DiffSide& side, uint64_t id);

}  // namespace zrec::cli
