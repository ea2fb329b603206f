// SHA-256 (FIPS 180-4), for `zrec digest`: a hash every platform and language ships
// (Python's hashlib, coreutils' sha256sum), so a digest can be recomputed without zrec.
// Portable C++, no dependency; about 200-400 MB/s per core.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace zrec::format {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256. Not thread-safe; one per thread.
class Sha256 {
 public:
  Sha256() { reset(); }
  void reset();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  // Returns the digest of everything updated since reset(); the object is reset afterwards.
  Sha256Digest finish();

  // One-shot convenience.
  static Sha256Digest hash(const void* data, size_t n) {
    Sha256 h;
    h.update(data, n);
    return h.finish();
  }

 private:
  void compress(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

// Lowercase hexadecimal, 64 characters.
std::string to_hex(const Sha256Digest& digest);

}  // namespace zrec::format
