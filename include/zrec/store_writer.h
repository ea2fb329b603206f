// Creating stores and appending to them (FORMAT.md §7). A StoreWriter holds the
// store's exclusive lifetime lock; records it appends become visible to readers only
// when it publishes (publish() or close()), which rewrites the static page.
//
// Example:
//   ZREC_RETURN_IF_ERROR(zrec::create_store("imgs/", {.schema = s, .codec = Codec::kZstd}));
//   ZREC_ASSIGN_OR_RETURN(auto writer, zrec::StoreWriter::open("imgs/"));
//   ZREC_RETURN_IF_ERROR(writer->append(records));
//   ZREC_RETURN_IF_ERROR(writer->close());
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zrec/codec.h"
#include "zrec/schema.h"
#include "zrec/status.h"

namespace zrec {

struct CreateOptions {
  Schema schema;
  Codec codec = Codec::kZstd;
  uint32_t data_shards = 4;         // 1..255
  std::vector<uint8_t> dictionary;  // dict.zr bytes; required exactly for zstd_dict
};

// Creates and publishes an empty store at `path`, which must not exist or be an empty
// directory (kAlreadyExists otherwise). The store is built in a temporary sibling
// directory and renamed into place, so a failed create leaves nothing behind.
Status create_store(const std::string& path, const CreateOptions& options);

// One record to append. Dense: `data` holds exactly the schema's record width and
// `dims` is null. Ragged: `dims` points at schema.ndim dimension lengths (each >= 1)
// and `data`/`size` is the C-order payload (the writer adds the shape prefix).
struct RecordRef {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
  const uint64_t* dims = nullptr;
};

struct WriterOptions {
  size_t threads = 0;        // lanes; 0: FORMAT.md §9 write budget
  bool wait = false;         // block on a held lock instead of failing with kBusy
  int level = 0;             // zstd level; 0: the format's (3, or 15 with a dictionary)
  bool checksum = false;     // set the zstd frame content checksum
  uint64_t chunk_bytes = uint64_t{4} << 20;  // shard-local chunk budget per lane
  bool sync = true;          // fsync before and after publication
};

class StoreWriter {
 public:
  // Reopens the published store at `path` for appending (kBusy if locked).
  static Result<std::unique_ptr<StoreWriter>> open(const std::string& path,
                                                   const WriterOptions& options = {});
  // An unclosed writer aborts: see abort().
  ~StoreWriter();

  const Schema& schema() const;
  Codec codec() const;
  uint32_t data_shards() const;
  size_t lanes() const;
  uint64_t length() const;            // records appended so far, published or not
  uint64_t published_length() const;  // records readers see

  // Checks records against the schema without any I/O (kInvalidArgument naming the
  // record's position in `records` and the rule broken).
  Status check(std::span<const RecordRef> records) const;

  // Appends one window of records: check() first, then payloads on all lanes, then the
  // window's RecordLocs in one positional write. Nothing is published. After an error
  // the writer can only abort.
  Status append(std::span<const RecordRef> records);

  // Publishes everything appended so far (a checkpoint): truncates each data file to
  // its tail, syncs, writes the static page.
  Status publish();

  // publish(), then releases the lock. The writer is unusable afterwards.
  Status close();

  // Drops unpublished records: truncates data files and the table back to the last
  // published state (so the store is byte-for-byte as published) and releases the lock.
  void abort();

 private:
  struct Impl;
  explicit StoreWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zrec
