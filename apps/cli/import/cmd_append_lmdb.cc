// zrec append-lmdb: the values of an LMDB environment, in key order, become records:
// of a Ragged '|u1' store (one record of bytes per value), or, with --dense, of a Dense
// store whose record width every value matches. Read in one read-only transaction, so
// a live environment (a writer at work) can be converted; the values are appended
// straight from LMDB's memory map, without a copy. --prefix selects the keys that
// start with a prefix, so that many processes can convert parts and `concat` them.
#include <lmdb.h>
#include <sys/stat.h>

#include <memory>
#include <string_view>
#include <vector>

#include "zrec/limits.h"

#include "cli/commands.h"
#include "cli/import/append_session.h"
#include "cli/keys_file.h"
#include "cli/usage.h"

namespace zrec::cli {

namespace {

struct AppendLmdbArgs {
  std::string store;
  std::string env;
  std::string prefix;
  std::string keys;
  bool dense = false;
  AppendArgs append;
};

// A |u1 record's payload is at most 2^31 - 1 bytes minus its 8-byte shape prefix.
// Records per append batch (their bytes stay in LMDB's map).
constexpr size_t kBatchRecords = 4096;

Status lmdb_error(int rc, const std::string& what, const std::string& env) {
  return io_error("cannot " + what + " LMDB environment '" + env + "': " + mdb_strerror(rc));
}

// Printable form of a binary key for messages: bytes outside ASCII 0x20..0x7e as \xNN.
std::string printable(std::string_view key) {
  std::string out;
  for (unsigned char c : key) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

// An environment, its read-only transaction and a cursor on the main database, closed
// in reverse order.
class LmdbReader {
 public:
  ~LmdbReader() {
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    if (env_ != nullptr) mdb_env_close(env_);
  }

  Status open(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return not_found("LMDB environment '" + path + "' does not exist");
    int rc = mdb_env_create(&env_);
    if (rc != 0) return lmdb_error(rc, "open", path);
    // A file is an environment made with MDB_NOSUBDIR (data file, lock file beside it).
    const unsigned flags = MDB_RDONLY | (S_ISDIR(st.st_mode) ? 0u : unsigned{MDB_NOSUBDIR});
    if ((rc = mdb_env_open(env_, path.c_str(), flags, 0644)) != 0) return lmdb_error(rc, "open", path);
    if ((rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn_)) != 0) return lmdb_error(rc, "read", path);
    if ((rc = mdb_dbi_open(txn_, nullptr, 0, &dbi_)) != 0) return lmdb_error(rc, "read", path);
    if ((rc = mdb_cursor_open(txn_, dbi_, &cursor_)) != 0) return lmdb_error(rc, "read", path);
    MDB_stat stat{};
    if (mdb_stat(txn_, dbi_, &stat) == 0) entries_ = stat.ms_entries;
    return Status::ok();
  }

  uint64_t entries() const { return entries_; }

  // The first entry at or after `prefix`, then the next ones; false past the end.
  Result<bool> next(std::string_view prefix, MDB_val& key, MDB_val& value, const std::string& path) {
    int rc;
    if (!started_) {
      started_ = true;
      if (prefix.empty()) {
        rc = mdb_cursor_get(cursor_, &key, &value, MDB_FIRST);
      } else {
        key = MDB_val{prefix.size(), const_cast<char*>(prefix.data())};
        rc = mdb_cursor_get(cursor_, &key, &value, MDB_SET_RANGE);
      }
    } else {
      rc = mdb_cursor_get(cursor_, &key, &value, MDB_NEXT);
    }
    if (rc == MDB_NOTFOUND) return false;
    if (rc != 0) return lmdb_error(rc, "read", path);
    const std::string_view k(static_cast<const char*>(key.mv_data), key.mv_size);
    return k.starts_with(prefix);  // keys are in order: the first without it ends the range
  }

 private:
  MDB_env* env_ = nullptr;
  MDB_txn* txn_ = nullptr;
  MDB_dbi dbi_ = 0;
  MDB_cursor* cursor_ = nullptr;
  uint64_t entries_ = 0;
  bool started_ = false;
};

Status run_append_lmdb(const AppendLmdbArgs& a, const GlobalOptions& g) {
  if (a.keys == "-") throw UsageError("--keys needs a file name (it is truncated back when records are not published)");
  LmdbReader reader;
  ZREC_RETURN_IF_ERROR(reader.open(a.env));
  ZREC_ASSIGN_OR_RETURN(auto session, AppendSession::open("append-lmdb", a.store, a.append, g));
  std::unique_ptr<KeysFile> keys;
  Status s = [&]() -> Status {
    const Schema& schema = session->schema();
    uint64_t width = 0;
    if (a.dense) {
      if (!schema.is_dense())
        return invalid_argument("--dense needs a Dense store, but '" + a.store + "' is " + schema.describe());
      width = schema.dtype.itemsize;
      for (uint64_t d : *schema.item_shape) width *= d;
    } else if (schema.is_dense() || schema.ndim != 1 || schema.dtype.str() != "|u1") {
      return invalid_argument(
          "the store must be Ragged '|u1' with ndim 1 (one record of bytes per value), or Dense "
          "with --dense, but '" +
          a.store + "' is " + schema.describe() +
          " (make one with: zrec create --ragged --dtype '|u1' --ndim 1 STORE)");
    }
    if (a.prefix.empty()) session->progress().set_total_records(reader.entries());
    if (!a.keys.empty()) {
      ZREC_ASSIGN_OR_RETURN(keys, KeysFile::open(a.keys));
      // Line i is record i's key: lines past the store's length are keys a killed run
      // wrote for records it never published.
      ZREC_ASSIGN_OR_RETURN(uint64_t cut, keys->align(session->next_id(), a.store));
      if (cut > 0)
        session->warn("removed the last " + std::to_string(cut) + " line" + (cut == 1 ? "" : "s") + " of keys file '" +
                      a.keys + "': keys of records an interrupted run did not publish");
      KeysFile* k = keys.get();
      session->set_listener({.prepare = [k] { return k->prepare(); },
                             .commit = [k] { k->commit(); },
                             .rollback = [k] { k->rollback(); }});
    }
    std::vector<RecordRef> refs;
    std::vector<uint64_t> dims;
    refs.reserve(kBatchRecords);
    dims.reserve(kBatchRecords);
    uint64_t batch_bytes = 0;
    const auto flush = [&]() -> Status {
      ZREC_RETURN_IF_ERROR(session->append(refs));
      refs.clear();
      dims.clear();
      batch_bytes = 0;
      return Status::ok();
    };
    MDB_val key{}, value{};
    for (;;) {
      ZREC_RETURN_IF_ERROR(session->check_interrupt());
      ZREC_ASSIGN_OR_RETURN(bool more, reader.next(a.prefix, key, value, a.env));
      if (!more) break;
      const std::string_view k(static_cast<const char*>(key.mv_data), key.mv_size);
      const uint64_t size = value.mv_size;
      if (size == 0) return invalid_argument("the value of key '" + printable(k) + "' is empty (records are nonempty)");
      if (a.dense && size != width)
        return invalid_argument("the value of key '" + printable(k) + "' is " + std::to_string(size) +
                                " bytes; a record of '" + a.store + "' (" + schema.describe() + ") is " +
                                std::to_string(width));
      if (!a.dense && size > kMaxRagged1dPayloadBytes)
        return invalid_argument("the value of key '" + printable(k) + "' is " + std::to_string(size) +
                                " bytes; a record holds at most " + std::to_string(kMaxRagged1dPayloadBytes));
      if (session->skip_record()) continue;
      dims.push_back(size);
      refs.push_back(RecordRef{static_cast<const uint8_t*>(value.mv_data), size, a.dense ? nullptr : &dims.back()});
      if (keys) keys->add(k);
      session->count_input(size);
      batch_bytes += size;
      // A batch ends at a checkpoint, so the keys written before a publication are
      // exactly those of the records it publishes.
      if (refs.size() >= std::min<uint64_t>(kBatchRecords, session->room_before_checkpoint()) ||
          batch_bytes >= session->window_bytes())
        ZREC_RETURN_IF_ERROR(flush());
    }
    return flush();
  }();
  return session->finish(std::move(s));
}

}  // namespace

Command register_append_lmdb(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<AppendLmdbArgs>();
  CLI::App* cmd =
      root.add_subcommand("append-lmdb", "Append the values of an LMDB environment, in key order, as records");
  cmd->add_option("store", args->store, "Store to append to (Ragged '|u1' ndim 1; Dense with --dense)")->required();
  cmd->add_option("env", args->env, "LMDB environment: its directory, or its data file (made with MDB_NOSUBDIR)")
      ->required();
  cmd->add_option("--prefix", args->prefix, "Only the keys that start with PREFIX");
  cmd->add_option("--keys", args->keys,
                  "Append each published record's key to FILE: line i+1 is record i's key (FILE starts with the "
                  "store)");
  cmd->add_flag("--dense", args->dense, "Append to a Dense store: every value must be one record's width");
  add_append_options(cmd, args->append);
  cmd->footer(
      "The environment is read in one read-only transaction (a snapshot): a live environment can be\n"
      "converted while a writer works on it.\n\n"
      "Examples:\n"
      "  zrec create --ragged --dtype '|u1' --ndim 1 imgs/ && zrec append-lmdb --keys imgs.keys imgs/ train.lmdb\n"
      "  zrec create --dense --dtype '<f4' --shape 512 emb/ && zrec append-lmdb --dense emb/ embeddings.lmdb\n"
      "  zrec append-lmdb --prefix 'train-' imgs/ data.lmdb");
  return Command{cmd, [args, &global]() { return run_append_lmdb(*args, global); }, nullptr};
}

}  // namespace zrec::cli
