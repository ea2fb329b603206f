// Read-only file mappings.
#include "io/mapped_file.h"

#include <sys/mman.h>

#include <utility>

namespace zrec::io {

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    reset();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile MappedFile::map(const File& file, uint64_t length) {
  MappedFile m;
  if (length == 0 || !file.is_open()) return m;
  void* p = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, file.fd(), 0);
  if (p == MAP_FAILED) return m;
  // Random gathers: a fault should read the page it needs, not a readahead window.
  (void)::madvise(p, length, MADV_RANDOM);
  m.data_ = static_cast<const uint8_t*>(p);
  m.size_ = length;
  return m;
}

void MappedFile::reset() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace zrec::io
