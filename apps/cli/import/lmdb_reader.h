// Reading an LMDB environment's entries for append-lmdb, in key order, in one read-only
// transaction, with every key and value checked to lie inside the data file.
#pragma once

#include <lmdb.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/status.h"

#include "cli/import/map_fault_guard.h"

namespace zrec::cli {

// Printable form of a binary key for messages: bytes outside ASCII 0x20..0x7e as \xNN.
std::string printable_key(std::string_view key);

// An environment, its read-only transaction and a cursor on each database read (the
// main one, or named ones: a root's streams, one database each), closed in reverse order.
//
// LMDB reads its data file through a memory map and trusts every page number, offset and
// size in it: a damaged file makes it (or a copy from a value it returns) read past the
// end of the file, which is SIGBUS. So: the page count the meta page claims must fit the
// file, every key and value LMDB returns must lie inside the file before anything reads
// it, and a fault inside LMDB's own cursor code is caught (MapFaultGuard) and reported.
class LmdbReader {
 public:
  LmdbReader() = default;
  LmdbReader(const LmdbReader&) = delete;
  LmdbReader& operator=(const LmdbReader&) = delete;
  ~LmdbReader();

  // Opens the environment at `path` (its directory, or its data file) and a cursor on
  // each of `dbs` (a name, or empty for the main database); cursor i reads dbs[i].
  Status open(const std::string& path, const std::vector<std::string>& dbs);

  // The entries of database i.
  uint64_t entries(size_t i) const { return cursors_[i].entries; }

  // An entry of the main database that is a named database (LMDB's own record of it:
  // its key the name, its value the 48-byte MDB_db), not data. Told by opening the name
  // as a database, only for values of that size.
  bool is_named_database(std::string_view key, const MDB_val& value);

  // The first entry of database i at or after `prefix`, then the next ones; false past
  // the end. The key and value returned lie inside the data file.
  Result<bool> next(size_t i, std::string_view prefix, MDB_val& key, MDB_val& value);
  // Starts every cursor again at its first entry, for a second pass.
  void rewind() {
    for (Cursor& c : cursors_) c.started = false;
  }

  // Lets the kernel take back the mapped pages of the data file read so far: the values
  // of a batch are copied into the store by then, and a mapped page counts in the
  // process's memory until it is unmapped, so a large environment would otherwise
  // cost its size in memory, not a window's.
  void release_pages();

 private:
  Status damaged(const std::string& what) const;
  std::string after_last() const;
  Status check_meta_pages(const std::string& data_file) const;
  Status check_map();
  bool inside_file(const void* p, size_t n);

  struct Cursor {
    MDB_cursor* cursor = nullptr;
    uint64_t entries = 0;
    bool started = false;
  };
  Status open_cursor(const std::string& db);

  std::string path_;
  MDB_env* env_ = nullptr;
  MDB_txn* txn_ = nullptr;
  std::vector<Cursor> cursors_;
  bool main_ = false;  // the one cursor reads the main database
  MapFaultGuard guard_;
  uint64_t read_ = 0, file_bytes_ = 0;
  uintptr_t map_start_ = 0, map_end_ = 0;
  std::string last_key_;
};

}  // namespace zrec::cli
