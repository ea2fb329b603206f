// Creating stores and appending to them (docs/format.md §7). A StoreWriter holds the
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
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/format.h"
#include "zrec/lanes.h"
#include "zrec/schema.h"
#include "zrec/status.h"

namespace zrec {

struct CodecChoice;

struct CreateOptions {
  Schema schema;
  Codec codec = Codec::kZstd;
  uint32_t data_shards = 4;         // 1..255
  std::vector<uint8_t> dictionary;  // dict.zr bytes; required exactly for zstd_dict
  // zstd/zstd_dict only: later writers set a content checksum on every frame (default
  // off). The format has no field for it, so an empty store keeps the setting as a
  // 16-byte marker in the unused RecordLoc[0] slot past `length`, which readers ignore
  // (docs/format.md §7); once it holds records, writers read it from record 0's frame.
  bool checksum = false;
  // Set: the store's codec is chosen by the first append (raw, zstd or
  // zstd_dict, zrec/codec_choice.h), from the records of its first window. The empty
  // store is a zstd store (`codec` must be zstd, with no dictionary and no checksum)
  // beside the file zrec-codec-auto that says so (docs/format.md §6).
  bool codec_auto = false;
};

// Creates and publishes an empty store at `path`, which must not exist or be an empty
// directory (kAlreadyExists otherwise). The store is built in a temporary sibling
// directory and renamed into place, so a failed create leaves nothing behind. What it
// leaves in place (a leftover temporary that is not provably zrec's) is said to ctx.warn.
Status create_store(const std::string& path, const CreateOptions& options, const Context& ctx = {});

// Removes the store at `path` when it holds no record, for a caller that created it
// and then failed before publishing anything into it, so that it leaves nothing
// behind. Takes the store's exclusive lock (kBusy when held), checks that `length` is
// 0 and that the directory holds only the store's own files, then removes meta.zr
// first (from then on it is no store), the other files and the directory. A store with
// records, or a directory with anything else in it, is left whole (kInvalidArgument).
Status remove_empty_store(const std::string& path);

class StoreWriter;
struct WriterOptions;

// Builds a new store at `path` in one go (recompress, concat): creates it empty in a
// temporary sibling directory ".NAME.zrec-tmp-XXXXXX", opens a writer on it with
// `writer_options`, calls fill(writer) to append records, publishes (close), fsyncs and
// renames the directory into place. `path` must not exist at all (kAlreadyExists).
// `path` never holds a partial store: on any error (from fill, too) the temporary is
// removed; after a crash or kill it stays behind under its hidden name, and the next
// create_store/build_store of the same path removes it when it provably is zrec's (its
// lock is free, its marker is there, same owner, only store files: store/temp_files.h);
// anything else of that name is left, with a warning to ctx.warn.
// The temporary is locked (flock) while it is built, so a live build is never removed.
// The writer runs in `ctx` (its lanes, its lock wait).
Status build_store(const std::string& path, const CreateOptions& options, const WriterOptions& writer_options,
                   const std::function<Status(StoreWriter&)>& fill, const Context& ctx = {});

// One record to append. Dense: `data` holds exactly the schema's record width and
// `dims` is null. Ragged: `dims` points at schema.ndim dimension lengths (each >= 1)
// and `data`/`size` is the C-order payload (the writer adds the shape prefix).
struct RecordRef {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
  const uint64_t* dims = nullptr;
};

// Records laid out as a raw store holds them (docs/format.md §5, §8): each shard's
// records (ID % data_shards) back to back, each Ragged one behind its shape prefix,
// with their RecordLocs. StoreWriter::pack makes them on any thread and
// append_packed() writes them, so a caller that reads records on one thread while
// another appends (append-stream's mapped lines) does the per-record work (checks,
// the copy behind each prefix, the RecordLocs) there: the write thread only writes.
// Reused across batches, it keeps its memory.
class PackedRecords {
 public:
  uint64_t size() const { return locs_.size(); }  // records
  uint64_t first_id() const { return first_id_; }

 private:
  friend class StoreWriter;
  uint64_t first_id_ = 0;
  // Offsets from the start of their shard's bytes, then, once the payload step placed
  // them, in their data file.
  std::vector<RecordLoc> locs_;
  bool placed_ = false;             // the payload step wrote them
  std::vector<uint64_t> shard_at_;  // where each shard's bytes start in bytes_, then the end
  // Grown, never shrunk, and never zeroed: every byte up to shard_at_.back() is packed.
  std::unique_ptr<uint8_t[]> bytes_;
  uint64_t capacity_ = 0;
};

// One record already in a store's codec (and dictionary), for copying stored frames
// between stores without re-encoding them (recompress, concat). `data` holds the
// phys_length stored bytes: raw, the logical record (Ragged: shape prefix and payload);
// zstd/zstd_dict, exactly one frame of logic_length bytes.
struct EncodedRecord {
  const uint8_t* data = nullptr;
  uint32_t phys_length = 0;
  uint32_t logic_length = 0;
  // Where the same stored bytes lie in a file (a source store's data file: src_fd, at
  // src_offset), or -1. When set, the writer may copy them kernel-side (copy_file_range,
  // io/copy_range.h) instead of writing `data`: it does when `data` is null (then every
  // record of the window must have a src_fd), and when records adjacent there and in
  // the destination form runs of 1 MiB on average.
  int src_fd = -1;
  uint64_t src_offset = 0;
};

// How a writer encodes and publishes; where it runs (lanes, lock wait) is the Context's.
struct WriterOptions {
  int level = 0;  // zstd level; 0: the format's (3, or 15 with a dictionary)
  // zstd frame content checksum on the records this writer appends: true/false force
  // it; nullopt (the default) keeps the store's setting: on when record 0's frame has a
  // checksum, or, for an empty store, when it was created with CreateOptions::checksum.
  std::optional<bool> checksum = std::nullopt;
  uint64_t chunk_bytes = uint64_t{4} << 20;  // shard-local chunk budget per lane
  bool sync = true;                          // fsync before and after publication
  // Set by DatasetWriter only: the store may be a stream its root lists. Otherwise open()
  // refuses such a store (refuse_root_stream, zrec/dataset.h): appending to one stream
  // alone would leave records past the root's commit that its next writer cuts away.
  bool through_root = false;
};

class StoreWriter {
 public:
  // Reopens the published store at `path` for appending (kBusy if locked and not
  // ctx.wait). It runs on ctx.lanes (null: write_lane_budget() lanes of its own).
  static Result<std::unique_ptr<StoreWriter>> open(const std::string& path, const WriterOptions& options = {},
                                                   const Context& ctx = {});
  // An unclosed writer aborts: see abort().
  ~StoreWriter();

  const Schema& schema() const;
  // The codec appended records are in: the store's, or, for a store created with
  // CreateOptions::codec_auto, the one its first window chose (published with it).
  Codec codec() const;
  // The choice this writer's first window made for such a store (zrec/codec_choice.h),
  // or null: the store's codec was chosen before, or no record was appended yet.
  const CodecChoice* codec_choice() const;
  uint32_t data_shards() const;
  const std::shared_ptr<Lanes>& lanes() const;  // the executor it runs on
  uint64_t length() const;                      // records appended so far, published or not
  uint64_t published_length() const;            // records readers see
  // Bytes of stored records in the data files (the sum of the tails), published or not.
  uint64_t stored_bytes() const;
  bool checksum() const;  // whether appended frames carry a content checksum
  // The dictionary bytes (dict.zr) of a zstd_dict store; empty for raw and zstd.
  const std::vector<uint8_t>& dictionary() const;

  // Checks records against the schema without any I/O (kInvalidArgument naming the
  // record's position in `records` and the rule broken).
  Status check(std::span<const RecordRef> records) const;

  // Appends one window of records: check() first, then payloads on all lanes, then the
  // window's RecordLocs in one positional write. Nothing is published. After an error
  // the writer can only abort.
  Status append(std::span<const RecordRef> records);

  // Lays `records` out in `into` (its memory reused) as this raw store holds them, to
  // be appended by append_packed() as the records of IDs first_id, first_id + 1, ...;
  // check() first. It reads only what no append changes, so it may run while another
  // thread appends. kInvalidArgument when codec() is not raw (a pending choice included).
  Status pack(std::span<const RecordRef> records, uint64_t first_id, PackedRecords& into) const;
  // Appends records pack() laid out: they must come next (first_id() == length()).
  // As append(): payloads on the lanes (one write per shard), then the RecordLocs in one
  // positional write; nothing is published; after an error the writer can only abort.
  // A batch is appended once (kInvalidArgument after): pack() again to reuse `records`.
  Status append_packed(PackedRecords& records);
  // append_packed() in its two steps, for a caller that overlaps them: the payload step
  // writes the records' bytes and gives `records` their RecordLocs; the table step
  // writes those, after which they count (length()). One batch's table step may run on
  // another thread beside the next batch's payload step; each step takes the batches
  // in order, and a batch's table step follows its own payload step. While a table is
  // pending, nothing else is appended or published (kInvalidArgument).
  Status write_packed_payload(PackedRecords& records);
  Status write_packed_table(const PackedRecords& records);

  // Appends one window of records whose stored bytes are given, writing them verbatim:
  // the same shard chunks, tail reservation and table write as append(), minus the
  // encoding. The caller vouches that the bytes are in this store's codec and
  // dictionary (Store::read_stored checks frames); this checks the lengths against
  // docs/format.md §8 (both >= 1 and < 2^31, raw phys == logic, Dense width, Ragged minimum)
  // and fails with kInvalidArgument naming the record's position. Nothing is published.
  // Records with a src_fd may be copied kernel-side (see EncodedRecord), physically
  // adjacent ones (adjacent in their source and in their destination chunk) with one
  // copy_file_range.
  Status append_encoded(std::span<const EncodedRecord> records);

  // Publishes everything appended so far (a checkpoint): truncates each data file to
  // its tail, syncs, writes the static page. If the page write or its fsync fails, the
  // page is read back: the error says whether the store now holds the new state (not
  // confirmed durable; published_length() is the new length) or still the previous
  // one, and no file is ever shortened below what the new page references. The writer
  // can only abort afterwards.
  Status publish();

  // publish(), then releases the lock. The writer is unusable afterwards.
  Status close();

  // Publishes only the first `length` records (<= published_length(); equal is a no-op)
  // and appends continue after them: the cut of store/cut_back.h, made under this
  // writer's lock, so nothing else runs between reading the store and cutting it. Only
  // with nothing appended since the last publication. After a failure the writer can
  // only abort.
  Status cut_back(uint64_t length);

  // Drops unpublished records: truncates data files and the table back to the last
  // published state (so the store is byte-for-byte as published) and releases the lock.
  // After a page write of unknown outcome it shortens nothing (see publish()).
  void abort();

 private:
  struct Impl;
  explicit StoreWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zrec
