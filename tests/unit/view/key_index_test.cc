// Tests for KeyIndex: keys by record ID from a keys file as append-tar writes it,
// unescaped, with a bounded index however many lines, and lines appended later.
#include "cli/view/key_index.h"

#include <fstream>

#include <doctest/doctest.h>

#include "testutil.h"

namespace zrec::cli::view {

TEST_SUITE("key_index") {
  TEST_CASE("keys are unescaped - past the last complete line there is none") {
    test::TempDir dir;
    const std::string path = dir.path() + "/keys";
    std::ofstream(path) << "a\nb\\\\c\nline\\nbreak\\r\n\nlast-without-newline";
    auto index = KeyIndex::open(path);
    REQUIRE(index.is_ok());
    CHECK((*index)->lines() == 4);
    CHECK(*(*index)->key(0).value() == "a");
    CHECK(*(*index)->key(1).value() == "b\\c");
    CHECK(*(*index)->key(2).value() == "line\nbreak\r");
    CHECK(*(*index)->key(3).value() == "");
    CHECK(!(*index)->key(4).value());
    std::ofstream(path, std::ios::app) << "\nmore\n";  // appended while open
    CHECK(*(*index)->key(4).value() == "last-without-newline");
    CHECK(*(*index)->key(5).value() == "more");
  }

  TEST_CASE("many lines: the index stays bounded and every key is found") {
    test::TempDir dir;
    const std::string path = dir.path() + "/keys";
    const uint64_t n = 3 * KeyIndex::kMaxEntries + 17;
    {
      std::ofstream out(path);
      for (uint64_t i = 0; i < n; ++i) out << "k" << i << "\n";
    }
    auto index = KeyIndex::open(path);
    REQUIRE(index.is_ok());
    CHECK((*index)->lines() == n);
    for (uint64_t id : {uint64_t{0}, uint64_t{1}, uint64_t{65535}, uint64_t{65536}, n / 2, n - 2, n - 1})
      CHECK(*(*index)->key(id).value() == "k" + std::to_string(id));
  }

  TEST_CASE("a missing file is an error naming it") {
    auto index = KeyIndex::open("/nonexistent/zrec.keys");
    CHECK(index.status().code() == StatusCode::kNotFound);
    CHECK(index.status().message().find("/nonexistent/zrec.keys") != std::string::npos);
  }
}

}  // namespace zrec::cli::view
