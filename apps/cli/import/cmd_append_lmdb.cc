// zrec append-lmdb: the values of an LMDB environment, in key order, become records:
// of a Ragged '|u1' store (one record of bytes per value), or, with --dense, of a Dense
// store whose record width every value matches. Read in one read-only transaction, so
// a live environment (a writer at work) can be converted; the values are appended
// straight from LMDB's memory map, without a copy. --prefix selects the keys that
// start with a prefix, so that many processes can convert parts and `concat` them.
// When STORE is a root, each --db NAME=STREAM feeds one of its streams, the databases
// aligned by key (lmdb_root_append.h).
#include <lmdb.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/format.h"

#include "cli/app/command.h"
#include "cli/import/append_command.h"
#include "cli/import/append_session.h"
#include "cli/import/keys_file.h"
#include "cli/import/lmdb_reader.h"
#include "cli/import/lmdb_root_append.h"
#include "cli/import/new_store_options.h"
#include "cli/options/usage_error.h"
#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

struct AppendLmdbArgs {
  std::string store;
  std::string env;
  std::string prefix;
  std::string keys;
  bool dense = false;
  std::vector<std::string> dbs;  // --db NAME: a named database instead of the main one (a root: NAME=STREAM each)
  std::vector<std::string> exclude_keys;  // --exclude-key KEY: entries that are no records (__len__)
  bool create = false;                    // --create: make STORE (Ragged '|u1' ndim 1) when missing
  NewStoreArgs new_store;
  AppendArgs append;
};

// What append-lmdb is to `zrec --help`, and its STORE operand.
constexpr AppendCommandForm kAppendLmdb{
    .name = "append-lmdb",
    .about = "Append the values of an LMDB environment, in key order, as records",
    .store = "Store to append to (Ragged '|u1' ndim 1; Dense with --dense); or a root, fed by --db NAME=STREAM"};

// Records per append batch (their bytes stay in LMDB's map).
constexpr size_t kBatchRecords = 4096;

// One append of an environment's values to an open session: the store's schema checked,
// the keys file aligned, then each entry a record, in batches that point into LMDB's map.
// Made before the session is opened and outliving it: the session waits for the batch in
// flight, and writes the keys file, whenever it ends.
class LmdbImport {
 public:
  LmdbImport(const AppendLmdbArgs& a, LmdbReader& reader) : a_(a), reader_(reader) {}

  // Appends every entry that --prefix selects; `created`: this run made the store.
  Status run(AppendSession& session, bool created);

 private:
  Status check_schema();
  Status open_keys(bool created);
  Status read_entries();
  Status add_entry(std::string_view k, const MDB_val& value);
  Status flush();
  void add_warnings();

  const AppendLmdbArgs& a_;
  LmdbReader& reader_;
  AppendSession* session_ = nullptr;
  std::unique_ptr<KeysFile> keys_;
  uint64_t width_ = 0;  // --dense: the bytes of a record
  // Two batches of records that point into LMDB's map: one is written (on the session's
  // write thread, where it writes behind) while the cursor fills the other.
  std::vector<RecordRef> refs_[2];
  std::vector<uint64_t> dims_[2];
  int cur_ = 0;
  uint64_t batch_bytes_ = 0;
  uint64_t max_batch_bytes_ = 0;  // the session's batch_bytes()
  uint64_t excluded_ = 0;
  std::vector<std::string> databases_, metadata_;  // named databases left out; metadata-like keys kept
};

Status LmdbImport::run(AppendSession& session, bool created) {
  session_ = &session;
  max_batch_bytes_ = session.batch_bytes();
  ZREC_RETURN_IF_ERROR(check_schema());
  if (a_.prefix.empty()) session_->progress().set_total_records(reader_.entries(0));
  if (!a_.keys.empty()) ZREC_RETURN_IF_ERROR(open_keys(created));
  for (int k : {0, 1}) {
    refs_[k].reserve(kBatchRecords);  // dims never reallocates: refs point into it
    dims_[k].reserve(kBatchRecords);
  }
  ZREC_RETURN_IF_ERROR(read_entries());
  add_warnings();
  session_->outcome().set("databases_skipped", static_cast<uint64_t>(databases_.size()));
  ZREC_RETURN_IF_ERROR(flush());
  ZREC_RETURN_IF_ERROR(session_->wait_appended());
  reader_.release_pages();
  return Status::ok();
}

Status LmdbImport::check_schema() {
  const Schema& schema = session_->schema();
  if (a_.dense) {
    if (!schema.is_dense())
      return invalid_argument("--dense needs a Dense store, but '" + a_.store + "' is " + schema.describe());
    width_ = schema.dtype.itemsize;
    for (uint64_t d : *schema.item_shape) width_ *= d;
  } else if (schema.is_dense() || schema.ndim != 1 || schema.dtype.str() != "|u1") {
    return invalid_argument(
        "the store must be Ragged '|u1' with ndim 1 (one record of bytes per value), or Dense "
        "with --dense, but '" +
        a_.store + "' is " + schema.describe() + " (make one with: zrec create --ragged --dtype '|u1' --ndim 1 STORE)");
  }
  return Status::ok();
}

Status LmdbImport::open_keys(bool created) {
  ZREC_ASSIGN_OR_RETURN(keys_, KeysFile::open(a_.keys, a_.store));
  // A store this run created has no keys yet: lines already there are another
  // store's (a store removed and made again), which aligning would erase.
  if (created) {
    ZREC_ASSIGN_OR_RETURN(const uint64_t lines, keys_->count_lines());
    if (lines > 0)
      return invalid_argument("keys file '" + a_.keys + "' already holds " + std::to_string(lines) + " lines, but '" +
                              a_.store +
                              "' is new: they are no keys of its records (name a new file, or remove this one)");
  }
  // Line i is record i's key: lines past the store's length are keys a killed run
  // wrote for records it never published (or another store's, of the same path).
  ZREC_ASSIGN_OR_RETURN(uint64_t cut, keys_->align(session_->next_id(), a_.store));
  session_->follow(keys_.get(), cut, "keys file '" + a_.keys + "'",
                   "keys of records '" + a_.store +
                       "' does not hold (an interrupted run wrote them before publishing, or the file was "
                       "another store's)");
  return Status::ok();
}

Status LmdbImport::read_entries() {
  MDB_val key{}, value{};
  for (;;) {
    ZREC_RETURN_IF_ERROR(session_->check_interrupt());
    ZREC_ASSIGN_OR_RETURN(bool more, reader_.next(0, a_.prefix, key, value));
    if (!more) return Status::ok();
    const std::string_view k(static_cast<const char*>(key.mv_data), key.mv_size);
    if (std::find(a_.exclude_keys.begin(), a_.exclude_keys.end(), k) != a_.exclude_keys.end()) {
      ++excluded_;
      continue;
    }
    if (reader_.is_named_database(k, value)) {
      databases_.emplace_back(k);
      continue;
    }
    ZREC_RETURN_IF_ERROR(add_entry(k, value));
  }
}

// One entry of data: checked, then compared (a record the store already holds) or
// added to the batch.
Status LmdbImport::add_entry(std::string_view k, const MDB_val& value) {
  // __len__, __keys__: a common convention for a dataset's own metadata.
  if (k.size() > 4 && k.starts_with("__") && k.ends_with("__")) metadata_.emplace_back(k);
  const uint64_t size = value.mv_size;
  if (size == 0) return invalid_argument("the value of key '" + printable_key(k) + "' is empty (records are nonempty)");
  if (a_.dense && size != width_)
    return invalid_argument("the value of key '" + printable_key(k) + "' is " + std::to_string(size) +
                            " bytes; a record of '" + a_.store + "' (" + session_->schema().describe() + ") is " +
                            std::to_string(width_));
  if (!a_.dense && size > kMaxRagged1dPayloadBytes)
    return invalid_argument("the value of key '" + printable_key(k) + "' is " + std::to_string(size) +
                            " bytes; a record holds at most " + std::to_string(kMaxRagged1dPayloadBytes));
  if (session_->skip_record()) {
    // Values are mapped, not read, until used: compared only with --check-present.
    if (session_->compares_skipped(false)) {
      uint64_t d = size;
      ZREC_RETURN_IF_ERROR(session_->compare_skipped({static_cast<const uint8_t*>(value.mv_data), size},
                                                     a_.dense ? nullptr : &d,
                                                     "the value of key '" + printable_key(k) + "'"));
    }
    return Status::ok();
  }
  dims_[cur_].push_back(size);
  refs_[cur_].push_back(
      RecordRef{static_cast<const uint8_t*>(value.mv_data), size, a_.dense ? nullptr : &dims_[cur_].back()});
  if (keys_) keys_->add(k);
  session_->count_input(size);
  batch_bytes_ += size;
  // A batch ends at a checkpoint, so the keys written before a publication are
  // exactly those of the records it publishes.
  if (refs_[cur_].size() >= std::min<uint64_t>(kBatchRecords, session_->room_before_checkpoint()) ||
      batch_bytes_ >= max_batch_bytes_)
    return flush();
  return Status::ok();
}

// Hands the batch on once the one before is written; only then are the mapped pages
// read so far handed back (the write thread reads the values, and the pages of this
// batch it has not touched yet cost no fault to drop).
Status LmdbImport::flush() {
  ZREC_RETURN_IF_ERROR(session_->wait_appended());
  reader_.release_pages();
  ZREC_RETURN_IF_ERROR(session_->append_behind(refs_[cur_]));
  cur_ ^= 1;
  refs_[cur_].clear();
  dims_[cur_].clear();
  batch_bytes_ = 0;
  return Status::ok();
}

// What was left out, and the keys that look like metadata yet were appended.
void LmdbImport::add_warnings() {
  if (excluded_ > 0)
    session_->add_final_warning("left out " + std::to_string(excluded_) + " entr" + (excluded_ == 1 ? "y" : "ies") +
                                " whose key --exclude-key names");
  const auto quoted = [](const std::vector<std::string>& keys) {
    std::string out;
    for (size_t i = 0; i < keys.size() && i < 8; ++i) out += (i > 0 ? ", '" : "'") + printable_key(keys[i]) + "'";
    return keys.size() > 8 ? out + ", ..." : out;
  };
  if (!databases_.empty())
    session_->add_final_warning("left out " + std::to_string(databases_.size()) + " entr" +
                                (databases_.size() == 1 ? "y" : "ies") + " of the main database: named database" +
                                (databases_.size() == 1 ? "" : "s") + ", not data (" + quoted(databases_) +
                                "; --db NAME reads one)");
  if (!metadata_.empty()) {
    std::string flags;
    for (size_t i = 0; i < metadata_.size() && i < 8; ++i) flags += " --exclude-key " + printable_key(metadata_[i]);
    session_->add_final_warning("appended " + std::to_string(metadata_.size()) + " entr" +
                                (metadata_.size() == 1 ? "y" : "ies") + " whose key looks like metadata (" +
                                quoted(metadata_) + ") as records; if they are not data," + flags + " leaves them out");
  }
}

Status run_append_lmdb(const AppendLmdbArgs& a, const GlobalOptions& g) {
  // A root (its zrec-root marker): a named database per stream.
  if (const auto ds = Dataset::open(a.store); ds.is_ok() && ds->marked()) {
    if (a.dbs.empty()) throw UsageError("a root takes --db NAME=STREAM for each of its streams");
    if (!a.keys.empty())
      throw UsageError("--keys: a root keeps its keys in a stream '" + std::string(kKeyStream) +
                       "' (zrec create --ragged --dtype '|u1' --ndim 1 ROOT/" + kKeyStream + ", then zrec adopt ROOT)");
    if (a.dense) throw UsageError("--dense: each stream of a root takes its record layout from its schema");
    if (a.create)
      throw UsageError("--create: a root's streams are made with zrec create ROOT/NAME and zrec adopt ROOT");
    return append_lmdb_to_root({a.store, a.env, a.prefix, a.dbs, a.exclude_keys}, a.append, g);
  }
  if (a.dbs.size() > 1)
    throw UsageError("--db: a store reads one database (--db NAME=STREAM, repeated, feeds the streams of a root)");
  if (a.keys == "-") throw UsageError("--keys needs a file name (it is truncated back when records are not published)");
  if (a.create && a.dense)
    throw UsageError(
        "--create makes a Ragged '|u1' store; a Dense store's dtype and shape are not in LMDB (make it "
        "with zrec create --dense ...)");
  std::optional<CreateOptions> create;
  if (a.create) {
    ZREC_ASSIGN_OR_RETURN(create, new_store_options(a.new_store, a.append.checksum.value_or(false), a.append.level));
  }
  // The source first: a refused environment leaves the store untouched (and uncreated).
  LmdbReader reader;
  ZREC_RETURN_IF_ERROR(reader.open(a.env, {a.dbs.empty() ? "" : a.dbs[0]}));
  CreatedStore created(a.store);
  if (create && !is_store_dir(a.store)) {
    create->schema.dtype = parse_dtype("|u1").value();
    create->schema.ndim = 1;
    set_new_store_codec(*create, a.new_store, a.append.checksum.value_or(false), a.append.level);
    ZREC_RETURN_IF_ERROR(created.create(*create, g.context(Work::kWrite)));
  }
  LmdbImport import(a, reader);  // before the session, which waits for its batch in flight
  auto opened = AppendSession::open("append-lmdb", a.store, a.append, g);
  if (!opened.is_ok() && opened.status().code() == StatusCode::kNotFound && !a.create)
    return Status(StatusCode::kNotFound,
                  opened.status().message() + " (--create makes a Ragged '|u1' store of the values)");
  if (!opened.is_ok()) return created.take_back(opened.status());
  auto session = std::move(opened).value();
  if (created) session->note_created();
  Status s = import.run(*session, static_cast<bool>(created));
  return created.finish(std::move(session), std::move(s));
}

// append-lmdb's own options, between STORE and the options every append takes.
void add_lmdb_options(CLI::App* cmd, AppendLmdbArgs& a) {
  cmd->add_option("env", a.env, "LMDB environment: its directory, or its data file (made with MDB_NOSUBDIR)")
      ->required();
  cmd->add_option("--prefix", a.prefix, "Only the keys that start with PREFIX");
  cmd->add_option("--keys", a.keys,
                  "Append each published record's key to FILE: line i+1 is record i's key (FILE starts with the "
                  "store)");
  cmd->add_flag("--dense", a.dense, "Append to a Dense store: every value must be one record's width");
  cmd->add_option("--db", a.dbs,
                  "Read the named database NAME of the environment (as mdb_dump -s NAME), not the main one. A root: "
                  "NAME=STREAM for each of its streams, the databases aligned by key (each holds the same keys)")
      ->allow_extra_args(false);
  cmd->add_option("--exclude-key", a.exclude_keys,
                  "Leave out the entry whose key is exactly KEY (a loader's __len__ or __keys__); repeat it for more")
      ->allow_extra_args(false);
  add_create_options(cmd, a.create, a.new_store, "(Ragged '|u1' ndim 1, one record of bytes per value)");
}

}  // namespace

Command register_append_lmdb(CLI::App& root, const GlobalOptions& global) {
  return register_append(root, global, kAppendLmdb, add_lmdb_options, run_append_lmdb);
}

}  // namespace zrec::cli
