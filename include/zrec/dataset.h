// Datasets of named streams: a directory whose subdirectories are stores, one per stream,
// record i of every stream belonging to sample i (docs/format.md §12), marked by a root
// marker; the reader of such a dataset (Dataset) and its writer (DatasetWriter). A
// store's own files and is_store_dir are zrec/format.h's and zrec/store.h's.
//
//   // Reading: the committed streams, each store opened when asked for.
//   ZREC_ASSIGN_OR_RETURN(zrec::Dataset ds, zrec::Dataset::open("ds/"));
//   for (const std::string& name : ds.streams()) {
//     ZREC_ASSIGN_OR_RETURN(auto store, ds.open_stream(name));
//     ... samples 0 .. ds.length() - 1 ...
//   }
//
//   // Writing two streams in step, crash-safe (see DatasetWriter):
//   ZREC_ASSIGN_OR_RETURN(auto w, zrec::DatasetWriter::open("ds/"));
//   ZREC_RETURN_IF_ERROR(w->recover().status());
//   ZREC_ASSIGN_OR_RETURN(zrec::StoreWriter* jpg, w->stream("jpg", jpg_options));
//   ZREC_ASSIGN_OR_RETURN(zrec::StoreWriter* cls, w->stream("cls", cls_options));
//   ... append one record to each per sample ...
//   ZREC_RETURN_IF_ERROR(w->publish());  // every stream, then the root's commit
//   ZREC_RETURN_IF_ERROR(w->close());
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/context.h"
#include "zrec/remote.h"
#include "zrec/status.h"
#include "zrec/store.h"
#include "zrec/store_writer.h"

namespace zrec {

// The names of `root`'s subdirectories that are stores, sorted by name. Leaves out
// ".NAME.zrec-tmp-XXXXXX", a store that create was building when it was killed (the
// next create of NAME removes it), and ".NAME.zrec-join-XXXXXX", a join in steps not yet
// published (zrec/join.h): neither is a stream. Empty when `root` cannot be listed. A
// URL cannot be listed: its streams are those its root marker names.
std::vector<std::string> child_stores(const std::string& root, const Context& ctx = {});

// The temporaries a writer of a root makes in it, which a kill can leave behind, by name,
// sorted: ".NAME.zrec-tmp-XXXXXX" (stream NAME being created) and ".zrec-root.tmp-XXXXXX"
// (the marker being written). The next writer of the root removes those no live process
// holds; a verify of the root may report them. Empty for a URL, or when `root` cannot be listed.
std::vector<std::string> root_temporaries(const std::string& root);

// --- roots: the marker of a dataset of named streams -----------------------------------
// A root (docs/format.md §12, a zrec extension) is a dataset of named streams marked
// with the file ROOT/zrec-root (DatasetWriter marks each root it writes), which names
// the streams and the committed sample count. A writer publishes every stream first and
// commits the root after (two phases, each atomic and durable), so after a crash the
// streams hold at least the committed count, and records past it are those of a run
// that never committed: the next writer cuts back to the count, which the marker
// records exactly. A directory without the marker is not a root, and no writer cuts
// anything in it.
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

// Reads the marker of `root` without locking it: nullopt when there is none (the
// directory is not a root), kMalformed when it breaks a rule. The marker is replaced by
// rename(2), so an unlocked read sees one whole committed state.
Result<std::optional<RootState>> read_root_marker(const std::string& root, const Context& ctx = {});

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
// (a writer that stores each sample's key), as WebDataset names a sample's key.
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

// --- reading a dataset -----------------------------------------------------------------
// Why a store of a marked root does not line up with the committed samples. One rule
// (the writer's as the reader's): DatasetWriter refuses to open a root with a kLayout,
// kMissing, kShort or kUnlisted problem (adopt takes an unlisted store that holds exactly
// the committed samples), and cuts kLong streams back in recover().
struct StreamProblem {
  enum class Kind {
    kLayout,    // a store in the root that is a symbolic link or no directory (check_root_stream)
    kMissing,   // a listed stream that is no store in the root, while samples are committed
    kShort,     // a listed stream holding fewer records than the committed samples: it lost some
    kLong,      // a listed stream holding more: an append killed before its commit left them
    kUnlisted,  // a store the marker does not list (not yet adopted), unless it is an empty
                // one while nothing is committed (a stream a killed first run created)
  };
  Kind kind = Kind::kLayout;
  std::string stream;              // the store's name in the root
  std::optional<uint64_t> length;  // its records, where known (kShort, kLong; kUnlisted when opened)
  std::string why;                 // kLayout: check_root_stream's message
};

// A dataset of named streams opened for reading: its marker, read once without locking
// (the marker is replaced by rename(2), so this is one whole committed state), and the
// stores it holds. No store is opened until open_stream() asks for it, so a remote root
// costs one request here. Copyable; it holds no file open.
class Dataset {
 public:
  // Reads the marker of `root`, a directory or a URL (with ctx.remote), and lists
  // the stores in a local one (child_stores). A directory without the marker opens too,
  // unmarked: a set of unrelated stores (marked() false), which is no root. Errors:
  // kMalformed for a marker that breaks a rule (read_root_marker); a path that does not
  // exist or holds neither a marker nor a store opens as an empty() Dataset, so that the
  // caller says what it expected there. `options` and `ctx` are kept for open_stream().
  static Result<Dataset> open(const std::string& root, const OpenOptions& options = {}, const Context& ctx = {});

  const std::string& root() const { return root_; }
  // The directory has a marker: it is a root, whose streams line up.
  bool marked() const { return committed_.has_value(); }
  // Neither a marker nor a store.
  bool empty() const { return !marked() && stores_.empty(); }
  // The committed samples: every listed stream holds at least this many (0 unmarked).
  uint64_t length() const { return committed_ ? committed_->length : 0; }
  // The committed streams, the marker's list, sorted (empty unmarked). A listed stream
  // may be missing while nothing is committed.
  const std::vector<std::string>& streams() const;
  // The marker as read (empty unmarked).
  const RootState& committed() const;
  // Every store in the root, listed or not, sorted (child_stores): for a URL, which
  // cannot be listed, the marker's streams.
  const std::vector<std::string>& stores() const { return stores_; }
  // The stores the marker does not list (a stream being made that has not been adopted
  // into the root yet), sorted; empty for a URL or an unmarked directory.
  std::vector<std::string> unadopted() const;
  // join_path(root(), name).
  std::string path_of(const std::string& name) const { return join_path(root_, name); }

  // Opens the store `name` of the root with the options and Context open() was given,
  // or with `options` and `ctx`. Its records past length() belong to no committed sample.
  Result<std::unique_ptr<Store>> open_stream(const std::string& name) const {
    return open_stream(name, options_, ctx_);
  }
  Result<std::unique_ptr<Store>> open_stream(const std::string& name, const OpenOptions& options,
                                             const Context& ctx) const;

  // The problems of a marked root whose stores hold `lengths` records (name -> records;
  // a store absent from it, one that could not be opened, is checked for its place in
  // the root but not for its length): kLayout for stores(), then the listed streams in
  // name order, then unlisted stores. Empty for an unmarked directory, or when the root
  // lines up.
  std::vector<StreamProblem> problems(const std::map<std::string, uint64_t>& lengths) const;
  // problems() of the lengths of every store, each opened with open_stream() and closed
  // again; the first store that cannot be opened is the error.
  Result<std::vector<StreamProblem>> check() const;

 private:
  std::string root_;
  OpenOptions options_;
  Context ctx_;
  std::optional<RootState> committed_;
  std::vector<std::string> stores_;
};

// --- writing a dataset -----------------------------------------------------------------
struct DatasetWriterOptions {
  // For every stream's StoreWriter: zstd level, checksum (the lanes and the lock wait,
  // also the root's, are the Context's).
  WriterOptions writer;
  // A directory of stores without a marker is no dataset and is refused (nothing
  // changed); with adopt its stores, which must hold equal counts of records, become
  // the streams of a new marker. In a marked root, a store the marker does not list is
  // refused; with adopt, one holding exactly the committed samples becomes a stream
  // (the next publish lists it): a stream added later, as labels computed from the data.
  bool adopt = false;
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
  // Every stream's writer runs in `ctx`; the sweep of leftover temporaries of killed
  // writers, which open() makes under the root's lock, says what it leaves in place (one
  // that is not provably zrec's) to ctx.warn.
  static Result<std::unique_ptr<DatasetWriter>> open(const std::string& root, const DatasetWriterOptions& options = {},
                                                     const Context& ctx = {});
  // Aborts unless close() ran.
  ~DatasetWriter();
  DatasetWriter(const DatasetWriter&) = delete;
  DatasetWriter& operator=(const DatasetWriter&) = delete;

  const std::string& root() const;
  // Samples committed: when opened, and after each publish().
  uint64_t committed_length() const;
  // The marker as open() found it (empty for a root this session marked).
  const RootState& found() const;
  // This session marked the root (a new directory or one of no store, or adopt).
  bool marked() const;
  // A publication began: abort() takes nothing back after this.
  bool published() const;
  // The streams' names, sorted.
  std::vector<std::string> stream_names() const;
  // The writer of an existing stream; nullptr when there is none of that name.
  StoreWriter* find(const std::string& name);

  // Cuts every stream back to the committed count; returns those it cut. Required
  // before stream() creates a stream and before publish(): either, called first, is
  // kInvalidArgument saying so (nothing changed).
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
  struct Impl;
  explicit DatasetWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// --- the dataset card ---------------------------------------------------------------
// What the data means (description, license, citation, class names, vocabularies), kept
// beside it: ROOT/zrec-card.json for a root, STORE/zrec-card.json for a lone store
// (docs/format.md §13; readers of the store, loaderx among them, ignore the file). The
// library moves its bytes; it does not parse their JSON.

inline constexpr const char* kCardFile = "zrec-card.json";
// A card larger than this is refused (a vocabulary of a million tokens fits).
inline constexpr uint64_t kMaxCardBytes = uint64_t{64} << 20;

// The card of the root or store at `path` (a URL too): its bytes, or nullopt when it has
// none. kInvalidArgument for one over kMaxCardBytes.
Result<std::optional<std::string>> read_card(const std::string& path, const Context& ctx = {});

// Replaces the card of the local root or store at `path` with `bytes` (nullopt: removes
// it), under the writer's lock of the root (its marker) or store (meta.zr), so two edits
// never interleave: written to a temporary beside it, synced, renamed into place and
// the directory synced; a reader sees the old card or the new one. kBusy (or a wait, as
// LockWait says, ctx.wait) while a writer holds the lock; kInvalidArgument for a URL or
// a path that is neither a root nor a store.
Status write_card(const std::string& path, const std::optional<std::string>& bytes, const Context& ctx = {});

}  // namespace zrec
