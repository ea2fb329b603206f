// Store: the read side of a zrecord store. Opening takes the shared lifetime lock and
// checks every store-level rule of docs/format.md §8; reads check every per-record rule.
//
// Example (a Context, zrec/context.h, says which lanes it reads on, whether it waits for a
// writer's lock, how a URL is read):
//   auto store = zrec::Store::open("tokens/");
//   if (!store.is_ok()) return store.status();
//   std::vector<uint64_t> ids = {0, 5, 9};
//   (*store)->scan(ids, 64 << 20, [&](const zrec::Window& w) { ...; return Status::ok(); });
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/format.h"
#include "zrec/lanes.h"
#include "zrec/remote.h"
#include "zrec/schema.h"
#include "zrec/status.h"

namespace zrec {

// Default memory budget of one window of records (append and read): 64 MiB of logical
// record bytes. A window always holds at least one record, so a single record larger
// than the budget is processed alone.
inline constexpr uint64_t kDefaultWindowBytes = uint64_t{64} << 20;

// "<dir>/<name>" without doubling a trailing slash. For a URL (zrec/remote.h) the name
// goes into its path, before a query string.
std::string join_path(const std::string& dir, const std::string& name);

// True when `path` holds a meta.zr (zrec/format.h names a store's files). stat(2)
// follows links, so a linked store (or a store whose meta.zr is a link, a FIFO or a
// directory, which opening it then refuses naming the problem) counts as one. Except: a
// meta.zr that is itself a store (a stream named meta.zr in a root of named streams, as
// an older append-tar could make) does not make `path` a store; `path` is then a root
// (zrec/dataset.h). A URL: whether the server has its meta.zr (one request, read with
// ctx.remote).
bool is_store_dir(const std::string& path, const Context& ctx = {});

// How a store is read; where it runs (lanes, lock wait, snapshot_if_busy, remote
// settings) is the Context's.
struct OpenOptions {
  // gather(): copy/decode records from read-only mappings of the data files instead of
  // a pread each (scan() always preads, to keep its memory within its window): always
  // for records of up to 64 KiB stored bytes (much faster for small records), and for
  // larger ones (up to 16 MiB) when their pages are in the page cache.
  // Like any mmap reader (numpy.memmap, LMDB), a process that truncates the files while
  // this store is open, ignoring its lock, makes reads fault. false: every record is pread.
  bool map_records = true;
};

// A batch of records read by scan(): ids[k]'s logical record (for Ragged, with its
// shape prefix) is data[offsets[k] .. offsets[k+1]).
struct Window {
  std::span<const uint64_t> ids;
  const uint8_t* data = nullptr;
  std::span<const uint64_t> offsets;  // ids.size() + 1 entries, offsets[0] == 0
  uint64_t first_index = 0;           // position of ids[0] in the scanned list
};

class Store {
 public:
  // Opens and checks the store at `path` (a directory). Errors: kNotFound (no such
  // directory or no meta.zr), kBusy (a writer holds it, and neither ctx.wait nor
  // ctx.snapshot_if_busy), kMalformed ("malformed store 'p': <file>: <rule>"), kIoError,
  // kCancelled (ctx.control). It runs on ctx.lanes (null: read_lane_count(path) lanes of
  // its own) for as long as it is open.
  static Result<std::unique_ptr<Store>> open(const std::string& path, const OpenOptions& options = {},
                                             const Context& ctx = {});
  ~Store();

  const std::string& path() const;
  uint64_t length() const;
  const Schema& schema() const;
  Codec codec() const;
  // Created with CreateOptions::codec_auto and still empty: the first append chooses the codec
  // (zrec/codec_choice.h); codec() is zstd until then.
  bool codec_pending() const;
  uint32_t data_shards() const;
  uint64_t tail(uint32_t shard) const;
  uint64_t stored_bytes() const;                // the sum of the tails: every stored record's bytes
  uint64_t dict_bytes() const;                  // 0 unless zstd_dict
  const std::shared_ptr<Lanes>& lanes() const;  // the executor it runs on
  // Opened with Context::snapshot_if_busy while a writer held the lock: this is a snapshot.
  bool writer_active() const;
  // Bytes of each file as found on disk: meta.zr, data_0.zr.., dict.zr (if any).
  std::vector<std::pair<std::string, uint64_t>> file_sizes() const;

  // Reads RecordLoc[first .. first+count) with one positional read and checks each
  // against docs/format.md §8 (lengths, tail bound, schema width). Requires first+count <= length.
  Status read_locs(uint64_t first, uint64_t count, RecordLoc* out) const;

  // Reads and checks the RecordLocs of arbitrary `ids` (each < length, kInvalidArgument
  // otherwise): out[k] is RecordLoc[ids[k]]. A Ragged gather starts here, to size its
  // destination. Thread-compatible with gather(): one call at a time per Store.
  Status read_locs(std::span<const uint64_t> ids, RecordLoc* out) const;

  // Gathers records into dest. Lanes take contiguous blocks of ids; per record, a lane
  // reads its RecordLoc (unless `locs` gives them) and its stored bytes, and decodes
  // straight into dest[dest_offsets[k], dest_offsets[k + 1]), which must be exactly its
  // logical length: dest_offsets holds ids.size() + 1 entries (kInvalidArgument
  // otherwise, nothing read). For a Dense store dest_offsets may be empty (record k goes
  // to dest + k * width). Every id must be < length (kInvalidArgument).
  Status gather(std::span<const uint64_t> ids, const RecordLoc* locs, uint8_t* dest,
                std::span<const uint64_t> dest_offsets = {});

  // Reads `ids` in order, in windows, calling `fn` once per window (on the calling
  // thread) while a reader thread already gathers the next one on the lanes. The two
  // windows in flight hold at most window_bytes logical bytes together (half each; a
  // record larger than that is a window alone), whatever ids.size(); a remote store's
  // scan may hold another half window of copies of records it meets again in a later
  // window (each range is fetched once). Stops at the
  // first error (from reading or from fn). fn must not use this Store's lanes (gather,
  // scan, read_stored, the id list form of read_locs) meanwhile.
  Status scan(std::span<const uint64_t> ids, uint64_t window_bytes, const std::function<Status(const Window&)>& fn);

  // Reads the stored (still encoded) bytes of records `ids`, whose RecordLocs are `locs`
  // (from read_locs), so that frames can be copied verbatim into another store of the
  // same codec (recompress, concat). Record k's stored bytes end up at
  // buffer[offsets[k] .. offsets[k] + locs[k].phys_length). The buffer is laid out in
  // physical order, not in the order of ids: records adjacent in a data file are read
  // with one positional read (runs of up to 8 MiB), on all lanes.
  // Checks every record as a read would: each location (docs/format.md §8); two records
  // overlapping in one data file; a zstd record is exactly one frame declaring
  // logic_length that decodes (on the lanes, into a small buffer that is dropped) to
  // exactly logic_length bytes, its content checksum verified when it has one; a
  // Ragged record's shape prefix matches its length. kMalformed names the record.
  // `buffer` and `offsets` are resized as needed and may be reused across calls.
  // With read_bytes false, a store whose checks need no stored byte (raw Dense: a read
  // checks its location alone) is not read at all: the locations and overlaps are
  // checked and buffer/offsets are left alone, for a kernel-side copy (data_fd); any
  // other store is read and checked as above.
  Status read_stored(std::span<const uint64_t> ids, const RecordLoc* locs, std::vector<uint8_t>& buffer,
                     std::vector<uint64_t>& offsets, bool read_bytes = true);
  // Whether read_stored(..., read_bytes = false) skips reading: raw Dense.
  bool checks_need_no_bytes() const;
  // The open descriptor of data_{shard}.zr, for copy_file_range from it (valid while
  // this Store is open; read-only); -1 for a remote store.
  int data_fd(uint32_t shard) const;
  // Bytes [offset, offset + n) of data_{shard}.zr, unchecked (a record's stored bytes as
  // they lie, for a hex view of a damaged one): kInvalidArgument past the shard's tail.
  Status read_data(uint32_t shard, uint64_t offset, uint64_t n, uint8_t* dst) const;
  // Whether the store was opened by URL (zrec/remote.h): its files have no descriptors.
  bool is_remote() const;

  // The dictionary bytes (dict.zr) of a zstd_dict store; empty for raw and zstd.
  const std::vector<uint8_t>& dictionary() const;

  // Whether the store's zstd frames carry a content checksum, judged by record 0's
  // frame (an empty store: whether it was created with CreateOptions::checksum).
  // False for raw. Writers keep this setting; verify counts every frame.
  bool checksum() const;

 private:
  struct Impl;
  explicit Store(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// For a Ragged logical record: its dims (the u64 shape prefix) and payload.
// Call only on records read from a validated store.
std::vector<uint64_t> ragged_dims(const Schema& schema, const uint8_t* record);

}  // namespace zrec
