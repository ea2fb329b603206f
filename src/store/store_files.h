// The set of open files that make up a store, loaded and checked once (docs/format.md §1,
// §8). Both the reader (Store) and the writer (StoreWriter) start here, so the
// store-level rules are written once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zrec/dataset.h"
#include "zrec/format.h"
#include "zrec/remote.h"
#include "zrec/schema.h"

#include "codec/record_codec.h"
#include "format/static_page.h"
#include "io/store_lock.h"
#include "zrec_support/file.h"

namespace zrec::store {

struct StoreFiles {
  std::string path;  // as given by the user, for messages (a URL: redact_url's)
  std::string url;   // remote stores (zrec/remote.h): the URL the files are fetched from
  // ... and how: the opening Context's remote settings and cancel token (nothing else of
  // it: its lanes and sinks belong to the call), for the files opened after meta.zr.
  Context opened_with;
  uint64_t open_micros = 0;  // remote: how long meta.zr's open took (a connection and two requests)
  // Readers read through meta_file() and data_file(), which both kinds of store have;
  // writing, locking and mapping go through `meta` and `data`, which a local store alone
  // has (writers refuse URLs).
  io::File meta;               // local: holds the lifetime lock
  std::vector<io::File> data;  // local: data_0.zr .. data_{S-1}.zr
  // Remote: meta.zr, then data_0.zr .. data_{S-1}.zr, read by ranges; local: empty.
  std::vector<std::unique_ptr<const io::Readable>> remote_files;
  format::StaticPage page;
  Schema schema;
  std::shared_ptr<codec::Dictionary> dictionary;  // zstd_dict only
  uint64_t dense_width = 0;                       // Dense only
  // zrec-codec-auto is in the directory (local stores only): with `length` 0 the codec
  // is still to be chosen by the first append (docs/format.md §6); with records it is a
  // leftover of a first append killed just after it published, which its writer removes.
  bool codec_file = false;
  bool codec_pending() const { return codec_file && page.length == 0; }
  // Opened without the lock because a writer holds it (snapshot_if_busy): `page` is the
  // last state the writer published; later publications are not seen.
  bool writer_active = false;

  const io::Readable& meta_file() const { return remote_files.empty() ? meta : *remote_files[0]; }
  const io::Readable& data_file(uint32_t shard) const {
    return remote_files.empty() ? static_cast<const io::Readable&>(data[shard]) : *remote_files[1 + shard];
  }
  bool is_remote() const { return !remote_files.empty(); }
};

// Opens the store read-only (kShared) or read-write (kExclusive), takes the lock,
// and checks: meta.zr size, the page, the schema, the table size, every data file's
// existence and size against its tail, dict.zr presence and validity.
// Store files are opened with O_NOFOLLOW: a symlink inside a store is refused.
// ctx.snapshot_if_busy (kShared without wait only): when a writer holds the lock, open
// without it instead of failing. The writer only appends past the published state and
// rewrites the page in place, so the page is read until two consecutive copies agree
// (a few tries, a few ms apart; kBusy if it keeps changing) and everything it publishes
// (table entries below its length, data below its tails) stays valid.
// The lock is waited for as ctx.wait says, cancelled by ctx.control.cancel.
// A URL (zrec/remote.h) is read with ctx.remote, its requests stopped by
// ctx.control.cancel, kShared only, without a lock.
Result<StoreFiles> load_store_files(const std::string& path, io::LockMode mode, const Context& ctx);

// The store's zstd checksum setting (see CreateOptions::checksum): for a store with
// records, whether record 0's frame carries a content checksum; for an empty store,
// whether the checksum marker sits in the RecordLoc[0] slot. False for raw stores and
// whenever the bytes can't be read (the reader's checks report those, not this).
struct ChecksumSetting {
  bool checksum = false;
  bool marker = false;  // the empty-store marker is present
};
ChecksumSetting read_checksum_setting(const StoreFiles& files);

// Writes the empty-store checksum marker into the RecordLoc[0] slot of meta.zr.
Status write_checksum_marker(const io::File& meta);

// Publishes only the first `length` records (<= the published length) of the store
// open as `files`, which holds its exclusive lock: store/cut_back.h says how. Once the
// cut page is written and synced, files.page is that page.
Status cut_back_files(StoreFiles& files, uint64_t length);

// kMalformed Status "malformed store '<path>': <what>".
Status malformed_store(const std::string& path, const std::string& what);

// A per-record rule broken: `key` is a short stable name for reports and JSON
// ("phys_length", "logic_length", "record_size", "past_tail", "raw_lengths",
// "dense_width", "ragged_length", "shape_prefix"); `text` says what is wrong, in the
// words check_record_loc / check_ragged_prefix put after the record's name.
struct BrokenRule {
  const char* key;
  std::string text;
};

// The rule of docs/format.md §8 that one RecordLoc breaks, without reading its payload, or
// nullopt. check_record_loc is this plus the store, file and record in a Status; verify
// uses it directly to keep going past problems.
std::optional<BrokenRule> record_loc_rule(const StoreFiles& files, const uint64_t* tails, uint64_t id,
                                          const RecordLoc& loc);

// Ragged: the rule a logical record's shape prefix breaks, or nullopt (see check_ragged_prefix).
std::optional<BrokenRule> ragged_prefix_rule(const StoreFiles& files, const uint8_t* record, uint64_t logic_length);

// Checks one RecordLoc against docs/format.md §8 without reading its payload: lengths in
// 1..2^31-1, offset + phys_length within the shard's tail, raw phys == logic, Dense
// width / Ragged minimum. Returns kMalformed naming the record, shard file and offset.
Status check_record_loc(const StoreFiles& files, const uint64_t* tails, uint64_t id, const RecordLoc& loc);

// Ragged: checks that the decoded shape prefix of a logical record is consistent with
// its length (each dim >= 1, 8*ndim + itemsize*prod(dims) == logic_length).
Status check_ragged_prefix(const StoreFiles& files, uint64_t id, const uint8_t* record, uint64_t logic_length);

}  // namespace zrec::store
