// Shared test helpers: temporary directories, Status assertions, record generators.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "zrec/schema.h"
#include "zrec/status.h"

namespace zrec::test {

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Bytes from hex ("83a5..."), for pinning encodings.
std::vector<uint8_t> from_hex(const std::string& hex);
std::vector<uint8_t> read_file(const std::string& path);
void write_file(const std::string& path, const std::vector<uint8_t>& bytes);

// Deterministic, compressible record payload of n bytes for record `id`.
std::vector<uint8_t> record_bytes(uint64_t id, size_t n);

// 4 KiB of repetitive bytes for stores of codec zstd_dict: a raw-content dictionary
// (docs/format.md §10 allows them), bytes that records share.
std::vector<uint8_t> test_dictionary();

// A Dense schema of items of `shape` and `dtype`.
Schema dense_schema(std::vector<uint64_t> shape, const char* dtype = "<i4");

}  // namespace zrec::test

// Fails the test with the Status message when `expr` is not ok.
#define REQUIRE_OK(expr)                                          \
  do {                                                            \
    const ::zrec::Status zrec_s_ = ::zrec::test::status_of(expr); \
    INFO(zrec_s_.message());                                      \
    REQUIRE(zrec_s_.is_ok());                                     \
  } while (0)

namespace zrec::test {
inline Status status_of(const Status& s) { return s; }
template <typename T>
Status status_of(const Result<T>& r) {
  return r.status();
}
}  // namespace zrec::test
