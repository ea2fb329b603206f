// A read-only shared mapping of the first `length` bytes of a file (mmap PROT_READ).
// The store reader maps each data file up to its tail to copy or decode records
// without a pread each. The mapping is only as stable as the file: whoever
// truncates a mapped file under a reader makes the reader's next access fault (SIGBUS),
// which is why the reader maps only files whose size it has checked and that the
// store's lifetime lock protects (docs/format.md §7: no writer while a reader holds it).
#pragma once

#include <cstddef>
#include <cstdint>

#include "zrec_support/file.h"

namespace zrec::io {

class MappedFile {
 public:
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() { reset(); }

  // Maps bytes [0, length) of `file` read-only, advising random access. Returns an
  // empty mapping (data() == nullptr) when length is 0 or mmap fails: callers then
  // fall back to positional reads, so a mapping is an optimization, never a requirement.
  static MappedFile map(const File& file, uint64_t length);

  const uint8_t* data() const { return data_; }
  uint64_t size() const { return size_; }
  void reset();

 private:
  const uint8_t* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace zrec::io
