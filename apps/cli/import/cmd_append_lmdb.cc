// zrec append-lmdb: the values of an LMDB environment, in key order, become records:
// of a Ragged '|u1' store (one record of bytes per value), or, with --dense, of a Dense
// store whose record width every value matches. Read in one read-only transaction, so
// a live environment (a writer at work) can be converted; the values are appended
// straight from LMDB's memory map, without a copy. --prefix selects the keys that
// start with a prefix, so that many processes can convert parts and `concat` them.
#include <fcntl.h>
#include <lmdb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/file.h"
#include "zrec/limits.h"

#include "cli/app/command.h"
#include "cli/app/usage.h"
#include "cli/import/append_session.h"
#include "cli/import/keys_file.h"
#include "cli/import/map_fault_guard.h"
#include "cli/import/new_store_options.h"
#include "cli/os/side_file.h"

namespace zrec::cli {

namespace {

struct AppendLmdbArgs {
  std::string store;
  std::string env;
  std::string prefix;
  std::string keys;
  bool dense = false;
  std::string db;                         // --db NAME: a named sub-database instead of the main one
  std::vector<std::string> exclude_keys;  // --exclude-key KEY: entries that are no records (__len__)
  bool create = false;                    // --create: make STORE (Ragged '|u1' ndim 1) when missing
  NewStoreArgs new_store;
  AppendArgs append;
};

// Named sub-databases an environment may hold for --db (LMDB needs a bound up front).
constexpr MDB_dbi kMaxNamedDatabases = 1024;

// A |u1 record's payload is at most 2^31 - 1 bytes minus its 8-byte shape prefix.
// Records per append batch (their bytes stay in LMDB's map).
constexpr size_t kBatchRecords = 4096;

Status lmdb_error(int rc, const std::string& what, const std::string& env) {
  return io_error("cannot " + what + " LMDB environment '" + env + "': " + mdb_strerror(rc));
}

// Printable form of a binary key for messages: bytes outside ASCII 0x20..0x7e as \xNN.
std::string printable_key(std::string_view key) {
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

// Where the kernel mapped the file (device, inode) for this process: the start of its
// mapping at file offset 0 and the end of the run of mappings that continue it. LMDB
// keeps the address of its map to itself; /proc/self/maps shows it.
bool find_mapping(dev_t dev, ino_t ino, uintptr_t& start, uintptr_t& end) {
  std::FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return false;
  bool found = false;
  char line[4096];
  while (std::fgets(line, sizeof line, maps) != nullptr) {
    unsigned long long lo = 0, hi = 0, offset = 0, inode = 0;
    unsigned major_dev = 0, minor_dev = 0;
    char perms[8];
    if (std::sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &lo, &hi, perms, &offset, &major_dev, &minor_dev, &inode) !=
        7)
      continue;
    if (inode != ino || major_dev != major(dev) || minor_dev != minor(dev)) continue;
    if (!found && offset == 0) {
      start = lo;
      end = hi;
      found = true;
    } else if (found && lo == end && offset == end - start) {
      end = hi;
    }
  }
  std::fclose(maps);
  return found;
}

// An environment, its read-only transaction and a cursor on the main database, closed
// in reverse order.
//
// LMDB reads its data file through a memory map and trusts every page number, offset and
// size in it: a damaged file makes it (or a copy from a value it returns) read past the
// end of the file, which is SIGBUS. So: the page count the meta page claims must fit the
// file, every key and value LMDB returns must lie inside the file before anything reads
// it, and a fault inside LMDB's own cursor code is caught (MapFaultGuard) and reported.
class LmdbReader {
 public:
  ~LmdbReader() {
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    if (env_ != nullptr) mdb_env_close(env_);
  }

  Status open(const std::string& path, const std::string& db) {
    path_ = path;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return not_found("LMDB environment '" + path + "' does not exist");
    int rc = mdb_env_create(&env_);
    if (rc != 0) return lmdb_error(rc, "open", path);
    // A file is an environment made with MDB_NOSUBDIR (data file, lock file beside it).
    const unsigned flags = MDB_RDONLY | (S_ISDIR(st.st_mode) ? 0u : unsigned{MDB_NOSUBDIR});
    const std::string data_file = S_ISDIR(st.st_mode) ? join_path(path, "data.mdb") : path;
    // LMDB opens it with a blocking open(2): a FIFO would wait for a writer past SIGINT.
    ZREC_RETURN_IF_ERROR(check_side_file(data_file, "LMDB environment"));
    ZREC_RETURN_IF_ERROR(check_meta_pages(data_file));
    // Also for the main database: its entries that are named databases are told by
    // opening them as such (is_named_database).
    if ((rc = mdb_env_set_maxdbs(env_, kMaxNamedDatabases)) != 0) return lmdb_error(rc, "open", path);
    if ((rc = mdb_env_open(env_, path.c_str(), flags, 0644)) != 0) return lmdb_error(rc, "open", path);
    ZREC_RETURN_IF_ERROR(check_map());
    if ((rc = mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn_)) != 0) return lmdb_error(rc, "read", path);
    rc = mdb_dbi_open(txn_, db.empty() ? nullptr : db.c_str(), 0, &dbi_);
    if (rc == MDB_NOTFOUND)
      return not_found("LMDB environment '" + path + "' has no database named '" + printable_key(db) +
                       "' (mdb_stat -a lists the names; without --db the main database is read)");
    if (rc == MDB_INCOMPATIBLE)
      return invalid_argument("'" + printable_key(db) + "' in LMDB environment '" + path +
                              "' is a key of the main database, not a named database");
    if (rc != 0) return lmdb_error(rc, "read", path);
    if ((rc = mdb_cursor_open(txn_, dbi_, &cursor_)) != 0) return lmdb_error(rc, "read", path);
    main_ = db.empty();
    MDB_stat stat{};
    if (mdb_stat(txn_, dbi_, &stat) == 0) entries_ = stat.ms_entries;
    return Status::ok();
  }

  uint64_t entries() const { return entries_; }

  // An entry of the main database that is a named database (LMDB's own record of it:
  // its key the name, its value the 48-byte MDB_db), not data. Told by opening the name
  // as a database, only for values of that size.
  bool is_named_database(std::string_view key, const MDB_val& value) {
    constexpr size_t kDbRecordBytes = 48;  // sizeof(MDB_db) on LP64
    if (!main_ || value.mv_size != kDbRecordBytes || key.empty() || key.find('\0') != std::string_view::npos)
      return false;
    const std::string name(key);
    MDB_dbi dbi = 0;
    if (mdb_dbi_open(txn_, name.c_str(), 0, &dbi) != 0) return false;  // MDB_INCOMPATIBLE: a plain key
    mdb_dbi_close(env_, dbi);  // a slot of kMaxNamedDatabases each, and nothing uses it
    return true;
  }

  // The first entry at or after `prefix`, then the next ones; false past the end. The
  // key and value returned lie inside the data file.
  Result<bool> next(std::string_view prefix, MDB_val& key, MDB_val& value) {
    int rc = 0;
    const bool read = guard_.run([&] {
      if (!started_) {
        if (prefix.empty()) {
          rc = mdb_cursor_get(cursor_, &key, &value, MDB_FIRST);
        } else {
          key = MDB_val{prefix.size(), const_cast<char*>(prefix.data())};
          rc = mdb_cursor_get(cursor_, &key, &value, MDB_SET_RANGE);
        }
      } else {
        rc = mdb_cursor_get(cursor_, &key, &value, MDB_NEXT);
      }
    });
    started_ = true;
    if (!read) return damaged("reading its entries went outside its data file" + after_last());
    if (rc == MDB_NOTFOUND) return false;
    if (rc != 0) return lmdb_error(rc, "read", path_);
    if (!inside_file(key.mv_data, key.mv_size))
      return damaged("an entry's key (" + std::to_string(key.mv_size) + " bytes) lies outside its data file" +
                     after_last());
    const std::string_view k(static_cast<const char*>(key.mv_data), key.mv_size);
    if (!inside_file(value.mv_data, value.mv_size))
      return damaged("the value of key '" + printable_key(k) + "' (" + std::to_string(value.mv_size) +
                     " bytes) lies outside its data file (" + std::to_string(file_bytes_) + " bytes)");
    last_key_.assign(k);
    ++read_;
    return k.starts_with(prefix);  // keys are in order: the first without it ends the range
  }

  // Lets the kernel take back the mapped pages of the data file read so far: the values
  // of a batch are copied into the store by then, and a mapped page counts in the
  // process's memory until it is unmapped, so a large environment would otherwise
  // cost its size in memory, not a window's.
  void release_pages() {
    const uint64_t bytes = std::min<uint64_t>(file_bytes_, map_end_ - map_start_);
    if (bytes > 0) ::madvise(reinterpret_cast<void*>(map_start_), bytes, MADV_DONTNEED);
  }

 private:
  Status damaged(const std::string& what) const {
    return invalid_argument("LMDB environment '" + path_ + "' is damaged: " + what);
  }
  std::string after_last() const {
    return read_ == 0 ? " (before its first entry)"
                      : " (after " + std::to_string(read_) + " entries; the last key read: '" +
                            printable_key(last_key_) + "')";
  }

  // mdb_env_open takes the page size from the meta pages unchecked: it divides by it and
  // maps the second meta page by it. So, read as LMDB reads them (meta page 0 at offset
  // 0, meta page 1 at its page size): an LMDB data file's page size (a power of two,
  // 512 to 64 KiB, the same in both) and two whole meta pages in the file. A file whose
  // first page is no LMDB meta page is left to LMDB, which says so.
  Status check_meta_pages(const std::string& data_file) const {
    constexpr uint32_t kMagic = 0xBEEFC0DE;
    constexpr size_t kMagicAt = 16, kPageSizeAt = 16 + 24;  // page header, then MDB_meta
    const int fd = ::open(data_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::ok();  // mdb_env_open reports it
    struct stat st;
    uint8_t meta[2][64] = {};
    uint32_t magic[2] = {}, page_size[2] = {};
    bool read = ::fstat(fd, &st) == 0 && ::pread(fd, meta[0], sizeof meta[0], 0) == sizeof meta[0];
    if (read) {
      std::memcpy(&magic[0], meta[0] + kMagicAt, 4);
      std::memcpy(&page_size[0], meta[0] + kPageSizeAt, 4);
      read = magic[0] == kMagic && ::pread(fd, meta[1], sizeof meta[1], page_size[0]) == sizeof meta[1];
    }
    ::close(fd);
    if (!read) return Status::ok();
    std::memcpy(&magic[1], meta[1] + kMagicAt, 4);
    std::memcpy(&page_size[1], meta[1] + kPageSizeAt, 4);
    const uint32_t p = page_size[0];
    if (p < 512 || p > 65536 || (p & (p - 1)) != 0)
      return damaged("its meta page claims pages of " + std::to_string(p) + " bytes (a power of two, 512 to 65536)");
    if (magic[1] == kMagic && page_size[1] != p)
      return damaged("its meta pages claim pages of " + std::to_string(p) + " and " + std::to_string(page_size[1]) +
                     " bytes");
    if (static_cast<uint64_t>(st.st_size) < 2 * uint64_t{p})
      return damaged("its data file holds " + std::to_string(st.st_size) + " bytes, less than its two meta pages of " +
                     std::to_string(p) + " bytes");
    return Status::ok();
  }

  // The data file's size, and where it is mapped; the pages the meta page claims must
  // fit in the file.
  Status check_map() {
    int fd = -1;
    struct stat st;
    if (mdb_env_get_fd(env_, &fd) != 0 || ::fstat(fd, &st) != 0)
      return io::errno_status(errno, "cannot stat the data file of LMDB environment", path_);
    file_bytes_ = static_cast<uint64_t>(st.st_size);
    MDB_stat env_stat{};
    MDB_envinfo info{};
    mdb_env_stat(env_, &env_stat);
    mdb_env_info(env_, &info);
    const uint64_t pages = uint64_t{info.me_last_pgno} + 1;
    if (env_stat.ms_psize == 0 || pages < 2 || pages > file_bytes_ / env_stat.ms_psize)
      return damaged("its meta page claims " + std::to_string(pages) + " pages of " +
                     std::to_string(env_stat.ms_psize) + " bytes, but its data file holds " +
                     std::to_string(file_bytes_) + " bytes");
    if (!find_mapping(st.st_dev, st.st_ino, map_start_, map_end_))
      return io_error("cannot find the memory map of LMDB environment '" + path_ + "' in /proc/self/maps");
    return Status::ok();
  }

  // [p, p + n) lies in the mapped part of the data file. A live environment's file
  // grows while it is read: the size is looked up again before a refusal.
  bool inside_file(const void* p, size_t n) {
    const auto at = reinterpret_cast<uintptr_t>(p);
    const auto fits = [&] {
      const uint64_t end = std::min<uint64_t>(file_bytes_, map_end_ - map_start_);
      return at >= map_start_ && at - map_start_ <= end && n <= end - (at - map_start_);
    };
    if (fits()) return true;
    int fd = -1;
    struct stat st;
    if (mdb_env_get_fd(env_, &fd) == 0 && ::fstat(fd, &st) == 0) file_bytes_ = static_cast<uint64_t>(st.st_size);
    return fits();
  }

  std::string path_;
  MDB_env* env_ = nullptr;
  MDB_txn* txn_ = nullptr;
  MDB_dbi dbi_ = 0;
  MDB_cursor* cursor_ = nullptr;
  bool main_ = false;  // the cursor reads the main database
  MapFaultGuard guard_;
  uint64_t entries_ = 0, read_ = 0, file_bytes_ = 0;
  uintptr_t map_start_ = 0, map_end_ = 0;
  std::string last_key_;
  bool started_ = false;
};

Status run_append_lmdb(const AppendLmdbArgs& a, const GlobalOptions& g) {
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
  ZREC_RETURN_IF_ERROR(reader.open(a.env, a.db));
  CreatedStore created(a.store);
  if (create && !is_store_dir(a.store)) {
    create->schema.dtype = parse_dtype("|u1").value();
    create->schema.ndim = 1;
    set_new_store_codec(*create, a.new_store, a.append.checksum.value_or(false), a.append.level);
    ZREC_RETURN_IF_ERROR(created.create(*create));
  }
  // Two batches of records that point into LMDB's map: one is written (on the session's
  // write thread, where it writes behind) while the cursor fills the other. Declared
  // before the session, which waits for the batch in flight whenever it ends.
  std::vector<RecordRef> refs[2];
  std::vector<uint64_t> dims[2];
  auto opened = AppendSession::open("append-lmdb", a.store, a.append, g);
  if (!opened.is_ok() && opened.status().code() == StatusCode::kNotFound && !a.create)
    return Status(StatusCode::kNotFound,
                  opened.status().message() + " (--create makes a Ragged '|u1' store of the values)");
  if (!opened.is_ok()) return created.take_back(opened.status());
  auto session = std::move(opened).value();
  if (created) session->note_created();
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
      ZREC_ASSIGN_OR_RETURN(keys, KeysFile::open(a.keys, a.store));
      // A store this run created has no keys yet: lines already there are another
      // store's (a store removed and made again), which aligning would erase.
      if (created) {
        ZREC_ASSIGN_OR_RETURN(const uint64_t lines, keys->count_lines());
        if (lines > 0)
          return invalid_argument("keys file '" + a.keys + "' already holds " + std::to_string(lines) +
                                  " lines, but '" + a.store +
                                  "' is new: they are no keys of its records (name a new file, or remove this one)");
      }
      // Line i is record i's key: lines past the store's length are keys a killed run
      // wrote for records it never published (or another store's, of the same path).
      ZREC_ASSIGN_OR_RETURN(uint64_t cut, keys->align(session->next_id(), a.store));
      session->follow(keys.get(), cut, "keys file '" + a.keys + "'",
                      "keys of records '" + a.store +
                          "' does not hold (an interrupted run wrote them before publishing, or the file was "
                          "another store's)");
    }
    for (int k : {0, 1}) {
      refs[k].reserve(kBatchRecords);  // dims never reallocates: refs point into it
      dims[k].reserve(kBatchRecords);
    }
    int cur = 0;
    uint64_t batch_bytes = 0;
    const uint64_t max_batch_bytes = session->batch_bytes();
    // Hands the batch on once the one before is written; only then are the mapped
    // pages read so far handed back (the write thread reads the values, and the
    // pages of this batch it has not touched yet cost no fault to drop).
    const auto flush = [&]() -> Status {
      ZREC_RETURN_IF_ERROR(session->wait_appended());
      reader.release_pages();
      ZREC_RETURN_IF_ERROR(session->append_behind(refs[cur]));
      cur ^= 1;
      refs[cur].clear();
      dims[cur].clear();
      batch_bytes = 0;
      return Status::ok();
    };
    MDB_val key{}, value{};
    uint64_t excluded = 0;
    std::vector<std::string> databases, metadata;  // named databases left out; metadata-like keys kept
    for (;;) {
      ZREC_RETURN_IF_ERROR(session->check_interrupt());
      ZREC_ASSIGN_OR_RETURN(bool more, reader.next(a.prefix, key, value));
      if (!more) break;
      const std::string_view k(static_cast<const char*>(key.mv_data), key.mv_size);
      if (std::find(a.exclude_keys.begin(), a.exclude_keys.end(), k) != a.exclude_keys.end()) {
        ++excluded;
        continue;
      }
      if (reader.is_named_database(k, value)) {
        databases.emplace_back(k);
        continue;
      }
      // __len__, __keys__: a common convention for a dataset's own metadata.
      if (k.size() > 4 && k.starts_with("__") && k.ends_with("__")) metadata.emplace_back(k);
      const uint64_t size = value.mv_size;
      if (size == 0)
        return invalid_argument("the value of key '" + printable_key(k) + "' is empty (records are nonempty)");
      if (a.dense && size != width)
        return invalid_argument("the value of key '" + printable_key(k) + "' is " + std::to_string(size) +
                                " bytes; a record of '" + a.store + "' (" + schema.describe() + ") is " +
                                std::to_string(width));
      if (!a.dense && size > kMaxRagged1dPayloadBytes)
        return invalid_argument("the value of key '" + printable_key(k) + "' is " + std::to_string(size) +
                                " bytes; a record holds at most " + std::to_string(kMaxRagged1dPayloadBytes));
      if (session->skip_record()) {
        // Values are mapped, not read, until used: compared only with --check-present.
        if (session->compares_skipped(false)) {
          uint64_t d = size;
          ZREC_RETURN_IF_ERROR(session->compare_skipped({static_cast<const uint8_t*>(value.mv_data), size},
                                                        a.dense ? nullptr : &d,
                                                        "the value of key '" + printable_key(k) + "'"));
        }
        continue;
      }
      dims[cur].push_back(size);
      refs[cur].push_back(
          RecordRef{static_cast<const uint8_t*>(value.mv_data), size, a.dense ? nullptr : &dims[cur].back()});
      if (keys) keys->add(k);
      session->count_input(size);
      batch_bytes += size;
      // A batch ends at a checkpoint, so the keys written before a publication are
      // exactly those of the records it publishes.
      if (refs[cur].size() >= std::min<uint64_t>(kBatchRecords, session->room_before_checkpoint()) ||
          batch_bytes >= max_batch_bytes)
        ZREC_RETURN_IF_ERROR(flush());
    }
    if (excluded > 0)
      session->add_final_warning("left out " + std::to_string(excluded) + " entr" + (excluded == 1 ? "y" : "ies") +
                                 " whose key --exclude-key names");
    const auto quoted = [](const std::vector<std::string>& keys) {
      std::string out;
      for (size_t i = 0; i < keys.size() && i < 8; ++i) out += (i > 0 ? ", '" : "'") + printable_key(keys[i]) + "'";
      return keys.size() > 8 ? out + ", ..." : out;
    };
    if (!databases.empty())
      session->add_final_warning("left out " + std::to_string(databases.size()) + " entr" +
                                 (databases.size() == 1 ? "y" : "ies") + " of the main database: named database" +
                                 (databases.size() == 1 ? "" : "s") + ", not data (" + quoted(databases) +
                                 "; --db NAME reads one)");
    if (!metadata.empty()) {
      std::string flags;
      for (size_t i = 0; i < metadata.size() && i < 8; ++i) flags += " --exclude-key " + printable_key(metadata[i]);
      session->add_final_warning("appended " + std::to_string(metadata.size()) + " entr" +
                                 (metadata.size() == 1 ? "y" : "ies") + " whose key looks like metadata (" +
                                 quoted(metadata) + ") as records; if they are not data," + flags + " leaves them out");
    }
    session->outcome().set("databases_skipped", static_cast<uint64_t>(databases.size()));
    ZREC_RETURN_IF_ERROR(flush());
    ZREC_RETURN_IF_ERROR(session->wait_appended());
    reader.release_pages();
    return Status::ok();
  }();
  return created.finish(std::move(session), std::move(s));
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
  cmd->add_option("--db", args->db,
                  "Read the named database NAME of the environment (as mdb_dump -s NAME), not the main one");
  cmd->add_option("--exclude-key", args->exclude_keys,
                  "Leave out the entry whose key is exactly KEY (a loader's __len__ or __keys__); repeat it for more")
      ->allow_extra_args(false);
  add_create_options(cmd, args->create, args->new_store, "(Ragged '|u1' ndim 1, one record of bytes per value)");
  add_append_options(cmd, args->append);
  add_check_present_options(cmd, args->append);
  return Command{cmd, [args, &global]() { return run_append_lmdb(*args, global); }, nullptr};
}

}  // namespace zrec::cli
