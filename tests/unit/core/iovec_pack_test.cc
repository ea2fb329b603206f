// Tests for io::pack_small_iovecs: the bytes written are unchanged, small neighbours
// are merged into scratch, large buffers stay where they are.
#include "io/iovec_pack.h"

#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::io {
namespace {

std::string flatten(const std::vector<iovec>& iov) {
  std::string out;
  for (const iovec& v : iov) out.append(static_cast<const char*>(v.iov_base), v.iov_len);
  return out;
}

iovec of(std::string& s) { return iovec{s.data(), s.size()}; }

TEST_CASE("iovec_pack: runs of small buffers become one scratch iovec, large ones stay in place") {
  std::string a = "alpha", b = "be", big(10, 'X'), c = "gamma", d = "", e = "delta";
  std::vector<iovec> iov{of(a), of(b), of(big), of(c), of(d), of(e)};
  const std::string before = flatten(iov);
  std::vector<uint8_t> scratch;
  pack_small_iovecs(iov, scratch, /*copy_below=*/8);
  CHECK(flatten(iov) == before);
  REQUIRE(iov.size() == 3);
  CHECK(iov[0].iov_base == scratch.data());
  CHECK(iov[0].iov_len == 7);
  CHECK(iov[1].iov_base == big.data());  // not copied
  CHECK(iov[2].iov_base == scratch.data() + 7);
  CHECK(iov[2].iov_len == 10);
}

TEST_CASE("iovec_pack: a lone small buffer or only large ones are left alone") {
  std::string big1(64, 'a'), small = "x", big2(64, 'b');
  std::vector<iovec> iov{of(big1), of(small), of(big2)};
  std::vector<uint8_t> scratch;
  pack_small_iovecs(iov, scratch, 16);
  REQUIRE(iov.size() == 3);
  CHECK(iov[1].iov_base == small.data());
  CHECK(scratch.empty());
}

TEST_CASE("iovec_pack: many tiny records pack into one iovec with their exact bytes") {
  std::vector<std::string> parts;
  for (int i = 0; i < 5000; ++i) parts.push_back("record " + std::to_string(i) + "\n");
  std::vector<iovec> iov;
  for (auto& p : parts) iov.push_back(of(p));
  const std::string before = flatten(iov);
  std::vector<uint8_t> scratch(3, 0xEE);  // stale contents are overwritten
  pack_small_iovecs(iov, scratch);
  REQUIRE(iov.size() == 1);
  CHECK(flatten(iov) == before);
}

}  // namespace
}  // namespace zrec::io
