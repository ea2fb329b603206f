// append_lmdb_to_root: see lmdb_root_append.h.
//
// The databases are read in one read-only transaction, a cursor each, walked in step:
// each step moves every cursor to its next key, and the keys must be equal. A first
// pass, under the root's lock, walks them all without touching the values (a value's
// size is in its node; big values are on pages of their own): a key one database lacks,
// or a value that cannot be a record of its stream, is refused before anything is
// written. The second pass appends, in batches that point into LMDB's map, each written
// behind (RootAppend::append_behind) while the walk goes on to the next.
#include "cli/import/lmdb_root_append.h"

#include <lmdb.h>

#include <algorithm>
#include <optional>
#include <string_view>

#include "zrec/dataset.h"
#include "zrec/format.h"

#include "cli/formats/printable.h"
#include "cli/import/lmdb_reader.h"
#include "cli/import/root_append.h"
#include "cli/options/stream_pairs.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"

namespace zrec::cli {

namespace {

// Samples per append batch (their bytes stay in LMDB's map).
constexpr size_t kRootBatchSamples = 4096;

// How the values of one database become records of its stream.
struct Layout {
  uint64_t width = 0;     // Dense: the bytes of a record; 0: Ragged ndim 1
  uint64_t itemsize = 1;  // Ragged: a value holds whole items
};

Result<Layout> layout_of(const RootAppend& r, size_t i) {
  const Schema& s = r.schema(i);
  if (s.is_dense()) {
    Layout l{s.dtype.itemsize, s.dtype.itemsize};
    for (uint64_t d : *s.item_shape) l.width *= d;
    return l;
  }
  if (s.ndim != 1)
    return invalid_argument(r.label(i) + " is " + s.describe() +
                            "; an LMDB value fills a Dense stream (of its record's bytes) or a Ragged ndim-1 one");
  return Layout{0, s.dtype.itemsize};
}

// The databases walked in step, one key at a time. Entry db.size() of values() is the
// key itself, for a root's __key__ stream.
class KeyWalk {
 public:
  KeyWalk(LmdbReader& reader, const LmdbRootArgs& a, const std::vector<std::string>& dbs)
      : reader_(reader), a_(a), dbs_(dbs), keys_(dbs.size()), values_(dbs.size() + 1), more_(dbs.size()) {}

  // Moves to the next key of every database; false past the last. A key that one
  // database holds and another lacks fails, naming both.
  Result<bool> next() {
    std::optional<size_t> first;
    for (size_t i = 0; i < dbs_.size(); ++i) {
      ZREC_ASSIGN_OR_RETURN(more_[i], advance(i));
      if (more_[i] && !first) first = i;
    }
    if (!first) return false;
    const std::string_view k = keys_[*first];
    for (size_t j = 0; j < dbs_.size(); ++j) {
      if (more_[j] && keys_[j] == k) continue;
      // The smaller key is the one the other database lacks (keys come in order).
      if (more_[j] && keys_[j] < k) return lacks(keys_[j], j, *first);
      return lacks(k, *first, j);
    }
    values_[dbs_.size()] = MDB_val{k.size(), const_cast<char*>(k.data())};
    return true;
  }
  std::string_view key() const { return keys_.empty() ? std::string_view() : keys_[0]; }
  const MDB_val& value(size_t i) const { return values_[i]; }
  const std::string& db(size_t i) const { return dbs_[i]; }
  size_t databases() const { return dbs_.size(); }

 private:
  Result<bool> advance(size_t i) {
    MDB_val key{};
    for (;;) {
      ZREC_ASSIGN_OR_RETURN(const bool more, reader_.next(i, a_.prefix, key, values_[i]));
      if (!more) return false;
      keys_[i] = std::string_view(static_cast<const char*>(key.mv_data), key.mv_size);
      if (std::find(a_.exclude_keys.begin(), a_.exclude_keys.end(), keys_[i]) == a_.exclude_keys.end()) return true;
    }
  }
  Status lacks(std::string_view key, size_t has, size_t lacks) const {
    return invalid_argument("key '" + printable_key(key) + "' is in database '" + printable_key(dbs_[has]) +
                            "' but not in database '" + printable_key(dbs_[lacks]) + "' of LMDB environment '" +
                            a_.env + "'; a root's databases are aligned by key (each must hold the same keys)");
  }

  LmdbReader& reader_;
  const LmdbRootArgs& a_;
  const std::vector<std::string>& dbs_;
  std::vector<std::string_view> keys_;  // into LMDB's map
  std::vector<MDB_val> values_;
  std::vector<bool> more_;
};

// The value of stream i at the walk's key as a record, or why it cannot be one.
Status check_value(const RootAppend& r, size_t i, const Layout& l, const KeyWalk& w, size_t source) {
  const uint64_t size = w.value(source).mv_size;
  if (size != 0 && (l.width != 0 ? size == l.width : size % l.itemsize == 0 && size <= kMaxRagged1dPayloadBytes))
    return Status::ok();
  // Named only here: every value of every sample comes by, twice.
  const std::string what = source < w.databases() ? "the value of key '" + printable_key(w.key()) + "' in database '" +
                                                        printable_key(w.db(source)) + "'"
                                                  : "key '" + printable_key(w.key()) + "'";
  if (size == 0) return invalid_argument(what + " is empty (records are nonempty)");
  if (l.width != 0)
    return invalid_argument(what + " is " + std::to_string(size) + " bytes; a record of " + r.label(i) + " (" +
                            r.schema(i).describe() + ") is " + std::to_string(l.width));
  if (size % l.itemsize != 0)
    return invalid_argument(what + " is " + std::to_string(size) + " bytes, not a whole number of " + r.label(i) +
                            "'s items of " + std::to_string(l.itemsize));
  return invalid_argument(what + " is " + std::to_string(size) + " bytes; a record holds at most " +
                          std::to_string(kMaxRagged1dPayloadBytes));
}

// The Ragged records' sizes of two batches, one filled while the other is written: refs
// point into them.
using BatchDims = std::vector<std::vector<uint64_t>>[2];

class LmdbRootFeed {
 public:
  // `dims` outlives the batch in flight.
  LmdbRootFeed(RootAppend& r, KeyWalk& walk, LmdbReader& reader, std::vector<size_t> sources,
               std::vector<Layout> layouts, uint64_t batch_bytes, BatchDims& dims)
      : r_(r),
        walk_(walk),
        reader_(reader),
        sources_(std::move(sources)),
        layouts_(std::move(layouts)),
        window_(batch_bytes),
        refs_(sources_.size()),
        dims_(dims) {
    for (auto& batch : dims_) {
      batch.resize(sources_.size());
      for (auto& d : batch) d.reserve(kRootBatchSamples);  // never reallocates: refs point into it
    }
  }

  // Every sample's values checked, nothing appended; the walk is rewound after.
  Status check() {
    for (;;) {
      if (interrupted()) return cancelled("interrupted");
      ZREC_ASSIGN_OR_RETURN(const bool more, walk_.next());
      if (!more) break;
      for (size_t i = 0; i < sources_.size(); ++i)
        ZREC_RETURN_IF_ERROR(check_value(r_, i, layouts_[i], walk_, sources_[i]));
    }
    reader_.rewind();
    return Status::ok();
  }

  Status run() {
    for (;;) {
      if (interrupted()) return cancelled("interrupted");
      ZREC_ASSIGN_OR_RETURN(const bool more, walk_.next());
      if (!more) return flush();
      if (r_.to_skip() > 0) {  // a sample the root holds already (or --skip-first): values unread
        r_.skip(1);
        continue;
      }
      for (size_t i = 0; i < sources_.size(); ++i) {
        const MDB_val& v = walk_.value(sources_[i]);
        ZREC_RETURN_IF_ERROR(check_value(r_, i, layouts_[i], walk_, sources_[i]));
        const uint64_t* dims = nullptr;
        if (layouts_[i].width == 0) dims = &dims_[cur_][i].emplace_back(v.mv_size / layouts_[i].itemsize);
        refs_[i].push_back(RecordRef{static_cast<const uint8_t*>(v.mv_data), v.mv_size, dims});
        batch_bytes_ += v.mv_size;
      }
      if (refs_[0].size() >= std::min<uint64_t>(kRootBatchSamples, r_.room()) || batch_bytes_ >= window_)
        ZREC_RETURN_IF_ERROR(flush());
    }
  }

 private:
  // Hands the batch on once the one before is written; only then are the mapped pages
  // read so far handed back (the write thread reads the values, and the pages of this
  // batch it has not touched yet cost no fault to drop), as append-lmdb into a store does.
  Status flush() {
    if (refs_[0].empty()) return Status::ok();
    r_.count_input(batch_bytes_);
    ZREC_RETURN_IF_ERROR(r_.wait_appended());
    reader_.release_pages();
    ZREC_RETURN_IF_ERROR(r_.append_behind(refs_));
    cur_ ^= 1;
    for (auto& v : refs_) v.clear();
    for (auto& d : dims_[cur_]) d.clear();
    batch_bytes_ = 0;
    return Status::ok();
  }

  RootAppend& r_;
  KeyWalk& walk_;
  LmdbReader& reader_;
  const std::vector<size_t> sources_;  // stream i's values: the walk's value(sources_[i])
  const std::vector<Layout> layouts_;
  const uint64_t window_;
  std::vector<std::vector<RecordRef>> refs_;
  BatchDims& dims_;
  int cur_ = 0;  // the batch in hand's dims_
  uint64_t batch_bytes_ = 0;
};

}  // namespace

Status append_lmdb_to_root(const LmdbRootArgs& a, const AppendArgs& args, const GlobalOptions& global) {
  const std::vector<StreamPair> specs = parse_stream_pairs(
      a.dbs, {.option = "--db", .stream_first = false, .expected = "a root takes NAME=STREAM, e.g. --db labels=label"});
  std::vector<std::string> dbs, names;
  for (const auto& s : specs) {
    dbs.push_back(s.source);
    names.push_back(s.stream);
  }
  // A __key__ stream no database feeds keeps the samples' keys.
  ZREC_ASSIGN_OR_RETURN(const Dataset ds, Dataset::open(a.root));
  const auto& have = ds.streams();
  if (std::find(have.begin(), have.end(), kKeyStream) != have.end() &&
      std::find(names.begin(), names.end(), kKeyStream) == names.end())
    names.emplace_back(kKeyStream);
  // The source first: a refused environment leaves the root untouched.
  LmdbReader reader;
  ZREC_RETURN_IF_ERROR(reader.open(a.env, dbs));
  InterruptScope interrupts;  // a --wait for the lock ends on SIGINT/SIGTERM
  BatchDims dims;             // before r, as the map is: the batch in flight points into them until r is finished
  ZREC_ASSIGN_OR_RETURN(auto r, RootAppend::open("append-lmdb", a.root, args, global, names));
  Status s = [&]() -> Status {
    std::vector<size_t> sources;
    std::vector<Layout> layouts;
    for (size_t i = 0; i < r->stream_count(); ++i) {
      sources.push_back(i < dbs.size() ? i : dbs.size());  // past the databases: the key
      ZREC_ASSIGN_OR_RETURN(Layout l, layout_of(*r, i));
      if (i >= dbs.size() && (l.width != 0 || r->schema(i).dtype.str() != "|u1"))
        return invalid_argument(r->label(i) + " is " + r->schema(i).describe() +
                                "; it gets each sample's key, which needs a Ragged ndim-1 '|u1' stream (or name the "
                                "database that feeds it: --db NAME=" +
                                std::string(kKeyStream) + ")");
      layouts.push_back(l);
    }
    KeyWalk walk(reader, a, dbs);
    LmdbRootFeed feed(*r, walk, reader, std::move(sources), std::move(layouts), r->batch_bytes(args.window_mib << 20),
                      dims);
    if (Status checked = feed.check(); !checked.is_ok())
      return checked.code() == StatusCode::kCancelled
                 ? checked
                 : Status(checked.code(), checked.message() + "; nothing was appended");
    return feed.run();
  }();
  return r->finish(std::move(s));
}

}  // namespace zrec::cli
