// append-lmdb's reader: an LMDB environment opened read-only, its entries checked to lie
// inside its data file before anything reads them.
#include "cli/import/lmdb_reader.h"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "zrec/store.h"

#include "cli/os/side_file.h"
#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

// Named sub-databases an environment may hold for --db (LMDB needs a bound up front).
constexpr MDB_dbi kMaxNamedDatabases = 1024;

Status lmdb_error(int rc, const std::string& what, const std::string& env) {
  return io_error("cannot " + what + " LMDB environment '" + env + "': " + mdb_strerror(rc));
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

}  // namespace

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

LmdbReader::~LmdbReader() {
  for (const Cursor& c : cursors_)
    if (c.cursor != nullptr) mdb_cursor_close(c.cursor);
  if (txn_ != nullptr) mdb_txn_abort(txn_);
  if (env_ != nullptr) mdb_env_close(env_);
}

Status LmdbReader::open(const std::string& path, const std::vector<std::string>& dbs) {
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
  for (const auto& db : dbs) ZREC_RETURN_IF_ERROR(open_cursor(db));
  main_ = dbs.size() == 1 && dbs[0].empty();
  return Status::ok();
}

Status LmdbReader::open_cursor(const std::string& db) {
  MDB_dbi dbi = 0;
  int rc = mdb_dbi_open(txn_, db.empty() ? nullptr : db.c_str(), 0, &dbi);
  if (rc == MDB_NOTFOUND)
    return not_found("LMDB environment '" + path_ + "' has no database named '" + printable_key(db) +
                     "' (mdb_stat -a lists the names; without --db the main database is read)");
  if (rc == MDB_INCOMPATIBLE)
    return invalid_argument("'" + printable_key(db) + "' in LMDB environment '" + path_ +
                            "' is a key of the main database, not a named database");
  if (rc != 0) return lmdb_error(rc, "read", path_);
  Cursor& c = cursors_.emplace_back();
  if ((rc = mdb_cursor_open(txn_, dbi, &c.cursor)) != 0) return lmdb_error(rc, "read", path_);
  MDB_stat stat{};
  if (mdb_stat(txn_, dbi, &stat) == 0) c.entries = stat.ms_entries;
  return Status::ok();
}

bool LmdbReader::is_named_database(std::string_view key, const MDB_val& value) {
  constexpr size_t kDbRecordBytes = 48;  // sizeof(MDB_db) on LP64
  if (!main_ || value.mv_size != kDbRecordBytes || key.empty() || key.find('\0') != std::string_view::npos)
    return false;
  const std::string name(key);
  MDB_dbi dbi = 0;
  if (mdb_dbi_open(txn_, name.c_str(), 0, &dbi) != 0) return false;  // MDB_INCOMPATIBLE: a plain key
  mdb_dbi_close(env_, dbi);  // a slot of kMaxNamedDatabases each, and nothing uses it
  return true;
}

Result<bool> LmdbReader::next(size_t i, std::string_view prefix, MDB_val& key, MDB_val& value) {
  Cursor& c = cursors_[i];
  int rc = 0;
  const bool read = guard_.run([&] {
    if (!c.started) {
      if (prefix.empty()) {
        rc = mdb_cursor_get(c.cursor, &key, &value, MDB_FIRST);
      } else {
        key = MDB_val{prefix.size(), const_cast<char*>(prefix.data())};
        rc = mdb_cursor_get(c.cursor, &key, &value, MDB_SET_RANGE);
      }
    } else {
      rc = mdb_cursor_get(c.cursor, &key, &value, MDB_NEXT);
    }
  });
  c.started = true;
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

void LmdbReader::release_pages() {
  const uint64_t bytes = std::min<uint64_t>(file_bytes_, map_end_ - map_start_);
  if (bytes > 0) ::madvise(reinterpret_cast<void*>(map_start_), bytes, MADV_DONTNEED);
}

Status LmdbReader::damaged(const std::string& what) const {
  return invalid_argument("LMDB environment '" + path_ + "' is damaged: " + what);
}

std::string LmdbReader::after_last() const {
  return read_ == 0
             ? " (before its first entry)"
             : " (after " + std::to_string(read_) + " entries; the last key read: '" + printable_key(last_key_) + "')";
}

// mdb_env_open takes the page size from the meta pages unchecked: it divides by it and
// maps the second meta page by it. So, read as LMDB reads them (meta page 0 at offset
// 0, meta page 1 at its page size): an LMDB data file's page size (a power of two,
// 512 to 64 KiB, the same in both) and two whole meta pages in the file. A file whose
// first page is no LMDB meta page is left to LMDB, which says so.
Status LmdbReader::check_meta_pages(const std::string& data_file) const {
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
Status LmdbReader::check_map() {
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
    return damaged("its meta page claims " + std::to_string(pages) + " pages of " + std::to_string(env_stat.ms_psize) +
                   " bytes, but its data file holds " + std::to_string(file_bytes_) + " bytes");
  if (!find_mapping(st.st_dev, st.st_ino, map_start_, map_end_))
    return io_error("cannot find the memory map of LMDB environment '" + path_ + "' in /proc/self/maps");
  return Status::ok();
}

// [p, p + n) lies in the mapped part of the data file. A live environment's file
// grows while it is read: the size is looked up again before a refusal.
bool LmdbReader::inside_file(const void* p, size_t n) {
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

}  // namespace zrec::cli
