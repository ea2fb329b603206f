// Where stores are: store directories, their files, and datasets of named streams (a
// directory whose subdirectories are stores, one per stream, record i of every stream
// belonging to sample i; docs/format.md §1 and §12), with the writer of such a dataset.
//
//   for (const std::string& name : zrec::child_stores("shards/"))
//     auto store = zrec::Store::open(zrec::join_path("shards/", name));
//
//   // Two streams, appended to in step, crash-safe (see DatasetWriter):
//   ZREC_ASSIGN_OR_RETURN(auto ds, zrec::DatasetWriter::open("ds/"));
//   ZREC_RETURN_IF_ERROR(ds->recover().status());
//   ZREC_ASSIGN_OR_RETURN(zrec::StoreWriter* jpg, ds->stream("jpg", jpg_options));
//   ZREC_ASSIGN_OR_RETURN(zrec::StoreWriter* cls, ds->stream("cls", cls_options));
//   ... append one record to each per sample ...
//   ZREC_RETURN_IF_ERROR(ds->publish());  // every stream, then the root's commit
//   ZREC_RETURN_IF_ERROR(ds->close());
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/remote.h"
#include "zrec/status.h"
#include "zrec/store_writer.h"
#include "zrec/warning.h"

namespace zrec {

// The files of a store directory (§1).
inline constexpr const char* kMetaFile = "meta.zr";
inline constexpr const char* kDictFile = "dict.zr";
inline std::string data_file_name(uint32_t shard) { return "data_" + std::to_string(shard) + ".zr"; }

// "<dir>/<name>" without doubling a trailing slash. For a URL (zrec/remote.h) the name
// goes into its path, before a query string.
std::string join_path(const std::string& dir, const std::string& name);

// True when `path` holds a meta.zr. stat(2) follows links, so a linked store (or a
// store whose meta.zr is a link, a FIFO or a directory, which opening it then refuses
// naming the problem) counts as one. Except: a meta.zr that is itself a store (a stream
// named meta.zr in a root of named streams, as an older append-tar could make) does not
// make `path` a store; `path` is then a root. A URL: whether the server has its meta.zr
// (one request).
bool is_store_dir(const std::string& path, const RemoteOptions& remote = {});

// The names of `root`'s subdirectories that are stores, sorted by name. Leaves out
// ".NAME.zrec-tmp-XXXXXX", a store that create was building when it was killed (the
// next create of NAME removes it), and ".NAME.zrec-join-XXXXXX", a join in steps not yet
// published (zrec/join.h): neither is a stream. Empty when `root` cannot be listed. A
// URL cannot be listed: its streams are those its root marker names.
std::vector<std::string> child_stores(const std::string& root, const RemoteOptions& remote = {});

// The temporaries a writer of a root makes in it, which a kill can leave behind, by name,
// sorted: ".NAME.zrec-tmp-XXXXXX" (stream NAME being created) and ".zrec-root.tmp-XXXXXX"
// (the marker being written). The next writer of the root removes those no live process
// holds; `zrec verify` reports them. Empty for a URL, or when `root` cannot be listed.
std::vector<std::string> root_temporaries(const std::string& root);

// --- roots: the marker of a dataset of named streams -----------------------------------
// A root (docs/format.md §12, a zrec extension) is a dataset of named streams marked
// with the file ROOT/zrec-root (DatasetWriter marks each root it writes, so `zrec
// append-tar` does), which names the streams and the committed sample count. A writer publishes every
// stream first and commits the root after (two phases, each atomic and durable), so
// after a crash the streams hold at least the committed count, and records past it are
// those of a run that never committed: the next writer cuts back to the count, which
// the marker records exactly. A directory without the marker is not a root, and no
// writer cuts anything in it.
//
// The marker is also the root's lock: a writer holds an exclusive flock on it (as a
// store's writer does on meta.zr) before it locks, reads or changes any stream; the
// protocol is DatasetWriter's (below). Readers need only what follows.

// The marker's file name, in the root directory.
inline constexpr const char* kRootMarkerFile = "zrec-root";

// What a marker records.
struct RootState {
  uint64_t length = 0;               // samples committed: every stream holds at least this many records
  std::vector<std::string> streams;  // the streams' names (subdirectories), sorted bytewise, distinct

  bool operator==(const RootState&) const = default;
};

// The marker's bytes for `state` (docs/format.md §12): "zrec-root 1", "length N", then
// one "stream NAME" line per stream, each line ending in '\n'; in names, backslash,
// newline and CR are written \\, \n and \r. kInvalidArgument for a name the marker
// cannot hold (empty, ".", "..", with '/' or NUL; unsorted or repeated).
Result<std::string> encode_root_marker(const RootState& state);
// Parses marker bytes; kMalformed naming `path` and the rule broken.
Result<RootState> decode_root_marker(const std::string& bytes, const std::string& path);

// Reads the marker of `root` without locking it: nullopt when there is none (the
// directory is not a root), kMalformed when it breaks a rule. The marker is replaced by
// rename(2), so an unlocked read sees one whole committed state.
Result<std::optional<RootState>> read_root_marker(const std::string& root, const RemoteOptions& remote = {});

// Why `name` cannot be a stream of `root` as it lies on disk, or kOk: a root's streams are
// directories inside it. A symbolic link (a stream shared with another root) is refused,
// since a writer's recovery cuts its streams back to the root's committed count and would
// cut the store it points to; so is anything but a directory. kInvalidArgument naming both.
Status check_root_stream(const std::string& root, const std::string& name);

// kInvalidArgument when the store at `store_path` is a stream of a root: the directory
// it lies in (links resolved) has a marker that lists it. Such a store is written only
// by the root's writer (DatasetWriter), which keeps every stream one record per sample;
// any other writer of it (StoreWriter::open, a source removed by ConsumedStore) calls
// this first. A store in a root that the marker does not list (a stream being made
// for adopt) is no stream yet: kOk, as for a URL or a path that does not resolve.
Status refuse_root_stream(const std::string& store_path);

// --- the names of streams -------------------------------------------------------------
// A stream's name is a directory under the root, and (for tar) a member's extension, a
// word in tables and job logs; it comes from outside (tar members, options, listings),
// so every one is checked by this one rule before it is used.
inline constexpr const char* kStreamNameRule =
    "a stream name is 1 to 128 letters, digits, '_' and '-', in words joined by single dots "
    "(jpg, seg.png), not starting with '-', with no word starting 'zrec-' or 'tmp-', and not ending in '.zr'";

// The stream of a root that holds each sample's key, when the root keeps them
// (append-tar --keys-stream), as WebDataset names a sample's key.
inline constexpr const char* kKeyStream = "__key__";

// Empty when `name` may name a stream; otherwise why not, in a few words ("it is
// hidden (starts with '.')", "it holds the byte 0x0a", "it is a store file name (ends
// in '.zr')").
std::string stream_name_problem(std::string_view name);

// kInvalidArgument "'ROOT' holds the store 'NAME', which cannot be a stream: WHY (the
// rule); move it out of the root" for the first of `names` (the stores a root holds)
// that breaks the rule: such a root is refused whole, rather than written into or read
// with a stream left out.
Status check_root_streams(const std::string& root, const std::vector<std::string>& names);

// --- writing a dataset -----------------------------------------------------------------
struct DatasetWriterOptions {
  // For every stream's StoreWriter: lanes, the lock wait (also the root's), zstd level,
  // checksum.
  WriterOptions writer;
  // A directory of stores without a marker is no dataset and is refused (nothing
  // changed); with adopt its stores, which must hold equal counts of records, become
  // the streams of a new marker. In a marked root, a store the marker does not list is
  // refused; with adopt, one holding exactly the committed samples becomes a stream
  // (the next publish lists it): a stream added later, as labels computed from the data.
  bool adopt = false;
  // Where the sweep of leftover temporaries of killed writers, which open() makes under
  // the root's lock, says what it leaves in place (one that is not provably zrec's):
  // zrec/warning.h.
  WarningSink warn = {};
};

// A stream recover() cut back: it held `from` records past the committed count.
struct StreamCut {
  std::string name;
  uint64_t from = 0;
};

// The writer of a dataset of named streams: the crash-safe protocol of docs/format.md §12.
//   open()     locks the root (its marker; a new directory, or one that holds no store,
//              gets a new one), then every stream's writer in name order (one global
//              order: two writers never deadlock), and checks, changing nothing, that
//              every listed stream is a directory store holding at least the committed
//              count and that no other store in the root holds records;
//   recover()  cuts every stream back to the committed count (records past it are those
//              of a run that stopped before its commit);
//   stream()   a stream's writer, creating the stream when it is new (only while the
//              dataset holds no committed sample: it could not line up otherwise);
//   publish()  every stream, then the root's commit of their common length: a crash at
//              any point leaves the committed count and streams at least that long;
//   abort()    drops what was not published; a session that never published takes back
//              the streams, the marker and the directory it created.
// Not thread-safe; the writers it hands out are used as StoreWriter says.
class DatasetWriter {
 public:
  static Result<std::unique_ptr<DatasetWriter>> open(const std::string& root, const DatasetWriterOptions& options = {});
  // Aborts unless close() ran.
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  const std::string& root() const { return root_; }
  // Samples committed: when opened, and after each publish().
  uint64_t committed_length() const;
  // The marker as open() found it (empty for a root this session marked).
  const RootState& found() const { return found_; }
  // This session marked the root (a new directory or one of no store, or adopt).
  bool marked() const { return marked_; }
  // A publication began: abort() takes nothing back after this.
  bool published() const { return published_; }
  // The streams' names, sorted.
  std::vector<std::string> stream_names() const;
  // The writer of an existing stream; nullptr when there is none of that name.
  StoreWriter* find(const std::string& name);

  // Cuts every stream back to the committed count; returns those it cut. Required
  // before stream() creates a stream and before publish().
  Result<std::vector<StreamCut>> recover();

  // The writer of stream `name`: the existing one, or a new store ROOT/name made with
  // `create` (`name` must pass stream_name_problem). A new stream while the dataset
  // holds committed samples is kInvalidArgument (it could not line up with them).
  Result<StoreWriter*> stream(const std::string& name, const CreateOptions& create);

  // Publishes every stream, then commits their common length (every stream must hold
  // the same number of records, published or not; kInvalidArgument otherwise, nothing
  // published). A stream created since the last commit is listed in the marker before
  // any of its records is published. After a failure the session can only be aborted.
  Status publish();
  // publish(), then closes every stream's writer (which find() still returns, for
  // their figures); the root's lock is let go when this writer is destroyed.
  Status close();
  // Drops every stream's unpublished records; a session that published nothing also
  // removes the streams it created (empty), restores the marker it found (or removes
  // the one it made) and the directory it made. Warnings for what it could not take
  // back go to `warnings` when given.
  void abort(std::vector<std::string>* warnings = nullptr);

 private:
  struct Stream;
  DatasetWriter(std::string root, DatasetWriterOptions options);
  Status lock();
  Status adopt(const std::vector<std::string>& stores);
  Status open_streams();
  Stream* find_stream(const std::string& name);

  const std::string root_;
  const DatasetWriterOptions options_;
  std::unique_ptr<class RootWriter> marker_;
  RootState found_;
  std::vector<std::unique_ptr<Stream>> streams_;  // sorted by name
  bool dir_created_ = false, marked_ = false, recovered_ = false, published_ = false, done_ = false;
};

// --- the dataset card ---------------------------------------------------------------
// What the data means (description, license, citation, class names, vocabularies), kept
// beside it: ROOT/zrec-card.json for a root, STORE/zrec-card.json for a lone store
// (docs/format.md §13; readers of the store, loaderx among them, ignore the file). The
// library moves its bytes; the CLI (zrec card) knows their JSON.

inline constexpr const char* kCardFile = "zrec-card.json";
// A card larger than this is refused (a vocabulary of a million tokens fits).
inline constexpr uint64_t kMaxCardBytes = uint64_t{64} << 20;

// The card of the root or store at `path` (a URL too): its bytes, or nullopt when it has
// none. kInvalidArgument for one over kMaxCardBytes.
Result<std::optional<std::string>> read_card(const std::string& path, const RemoteOptions& remote = {});

// Replaces the card of the local root or store at `path` with `bytes` (nullopt: removes
// it), under the writer's lock of the root (its marker) or store (meta.zr), so two edits
// never interleave: written to a temporary beside it, synced, renamed into place and
// the directory synced; a reader sees the old card or the new one. kBusy (or a wait, as
// lock_wait.h says) while a writer holds the lock; kInvalidArgument for a URL or a path
// that is neither a root nor a store.
Status write_card(const std::string& path, const std::optional<std::string>& bytes, const io::LockWait& wait);

}  // namespace zrec
