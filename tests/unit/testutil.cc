// Shared test helpers.
#include "testutil.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "zrec/dtype.h"

namespace zrec::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base ? base : "/tmp") + "/zrec-test-XXXXXX";
  REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// Overwrites in place, then cuts to size, where an ofstream would truncate to zero first:
// ext4 (auto_da_alloc) writes back a file truncated to zero and rewritten at close, and
// the mutation suite rewrites a store's files 2,400 times (42 s of waiting for the disk
// on CI's machine, under half a second of CPU). The bytes and the inode are the same.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    REQUIRE(n > 0);
    done += static_cast<size_t>(n);
  }
  REQUIRE(::ftruncate(fd, static_cast<off_t>(bytes.size())) == 0);
  REQUIRE(::close(fd) == 0);
}

std::vector<uint8_t> record_bytes(uint64_t id, size_t n) {
  std::vector<uint8_t> v(n);
  uint64_t x = id * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    if (i % 16 == 0) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v[i] = static_cast<uint8_t>((i % 16 < 8) ? (x >> (8 * (i % 8))) : (i / 16 + id));
  }
  return v;
}

std::vector<uint8_t> test_dictionary() {
  std::vector<uint8_t> d;
  for (int i = 0; i < 4096; ++i) d.push_back(static_cast<uint8_t>(i / 16));
  return d;
}

Schema dense_schema(std::vector<uint64_t> shape, const char* dtype) {
  Schema s;
  s.dtype = parse_dtype(dtype).value();
  s.ndim = static_cast<uint32_t>(shape.size());
  s.item_shape = std::move(shape);
  return s;
}

}  // namespace zrec::test
