// A regular file mapped read-only, for a reader that would otherwise copy every byte
// out of the page cache with read(2): its records are cut, and written to a store,
// from the pages where they lie.
//
// A mapping does not shrink with its file: if another process truncates the file while
// it is mapped, a read past the new end raises SIGBUS, which would kill zrec wherever
// the read happened (often on a write thread, inside the store writer, where no check
// of ours comes first). While a MappedFile is alive, such a fault inside its bytes maps
// a page of zeros there instead and marks the mapping shrunk; the reader asks shrank()
// before it trusts what it read, and fails, so records cut from the zeros are never
// published.
//
//   auto map = MappedFile::map(fd, offset);  // null: not a regular file; read instead
//   ... cut records from map->bytes(), append them, wait for the appends ...
//   if (map->shrank()) return ...;          // "'x' shrank while it was read"
//
// One MappedFile at a time per process, made and destroyed on the command's thread
// (signal dispositions are the process's); any thread may read its bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "cli/os/signal_handlers.h"

namespace zrec::cli {

class MappedFile {
 public:
  // Maps `fd` from byte `offset` to its end as of now. Null when fd is not a regular
  // file, holds nothing past `offset`, or cannot be mapped: the caller reads instead.
  static std::unique_ptr<MappedFile> map(int fd, uint64_t offset);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // The file's bytes from `offset`.
  std::span<const uint8_t> bytes() const { return {begin_, size_}; }

  // Maps the pages of [from, from + bytes) (in bytes()) in one call, ahead of reading
  // them, instead of one page fault per few of them.
  void populate(const uint8_t* from, uint64_t bytes);

  // Drops the pages wholly before `end` (in bytes()) from this process: they stay in
  // the page cache, but a reader that went through a large file no longer counts it
  // all in its memory. Nothing may read them afterwards.
  void release_before(const uint8_t* end);

  // Whether a read found the file shorter than it was mapped (the bytes past its new
  // end read as zeros).
  bool shrank() const;

 private:
  MappedFile(void* mapping, uint64_t mapping_bytes, uint64_t skip);

  void* mapping_;           // page-aligned start of the mapping
  uint64_t mapping_bytes_;  // its length
  const uint8_t* begin_;    // `offset` within it
  uint64_t size_;
  const uint8_t* released_;  // pages before this were released
  SignalHandlers::Scope scope_;
};

}  // namespace zrec::cli
