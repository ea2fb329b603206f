// Tests for apps/cli/formats/selection: parsing, NumPy/Python slice resolution, index files.
// Expected ID lists were generated with Python (list(range(n))[slice] per item).
#include "cli/formats/selection.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::cli {
namespace {

std::vector<uint64_t> select_ids(const std::string& text, uint64_t length) {
  Result<std::vector<SelectionItem>> items = parse_selection(text);
  REQUIRE_MESSAGE(items.is_ok(), items.status().message());
  Result<std::vector<uint64_t>> ids = resolve_selection(items.value(), length);
  REQUIRE_MESSAGE(ids.is_ok(), ids.status().message());
  return ids.value();
}

std::string parse_error(const std::string& text) {
  Result<std::vector<SelectionItem>> items = parse_selection(text);
  REQUIRE(!items.is_ok());
  CHECK(items.status().code() == StatusCode::kInvalidArgument);
  return items.status().message();
}

// Writes `contents` to a temporary file and reads indices from it through InputStream.
Result<std::vector<uint64_t>> read_indices_from(const std::string& contents, uint64_t length) {
  char path[] = "/tmp/zrec_selection_test_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, contents.data(), contents.size()) == ssize_t(contents.size()));
  REQUIRE(lseek(fd, 0, SEEK_SET) == 0);
  io::InputStream in(fd, "idx.txt", {}, /*buffer_bytes=*/7);  // tiny buffer: lines span reads
  Result<std::vector<uint64_t>> ids = read_indices(in, length);
  close(fd);
  unlink(path);
  return ids;
}

}  // namespace

TEST_SUITE("selection") {
  TEST_CASE("parses indices and slices with absent fields") {
    Result<std::vector<SelectionItem>> items = parse_selection("7, -1 ,10:20,::100,-3:");
    REQUIRE(items.is_ok());
    REQUIRE(items->size() == 5);
    CHECK(!(*items)[0].is_slice);
    CHECK((*items)[0].index == 7);
    CHECK((*items)[1].index == -1);
    CHECK((*items)[2].is_slice);
    CHECK((*items)[2].start == 10);
    CHECK((*items)[2].stop == 20);
    CHECK(!(*items)[2].step.has_value());
    CHECK(!(*items)[3].start.has_value());
    CHECK(!(*items)[3].stop.has_value());
    CHECK((*items)[3].step == 100);
    CHECK((*items)[4].start == -3);
    CHECK(!(*items)[4].stop.has_value());
  }

  TEST_CASE("slices resolve exactly like Python's slice.indices and range") {
    struct Case {
      const char* text;
      uint64_t length;
      std::vector<uint64_t> expected;
    };
    const Case cases[] = {
        {"::-3", 10, {9, 6, 3, 0}},
        {"2:-2", 10, {2, 3, 4, 5, 6, 7}},
        {"::-1", 5, {4, 3, 2, 1, 0}},
        {"10:2:-3", 20, {10, 7, 4}},
        {"-3:", 10, {7, 8, 9}},
        {":", 4, {0, 1, 2, 3}},
        {"5:100", 8, {5, 6, 7}},
        {"-100:3", 8, {0, 1, 2}},
        {"100:", 8, {}},
        {":-100", 8, {}},
        {"3:1", 10, {}},
        {"-1:-5:-1", 10, {9, 8, 7, 6}},
        {"-1:-100:-2", 10, {9, 7, 5, 3, 1}},
        {"100:-100:-7", 10, {9, 2}},
        {"::", 0, {}},
        {"::-1", 0, {}},
        {"5::-2", 10, {5, 3, 1}},
        {":5:-1", 10, {9, 8, 7, 6}},
        {"-20::-1", 10, {}},
        {"::1000000", 10, {0}},
        {"::-9223372036854775808", 10, {9}},
        {"9223372036854775807::-1", 3, {2, 1, 0}},
        {"-9223372036854775808:9223372036854775807:9223372036854775807", 3, {0}},
        {"1:5,9,-3:", 12, {1, 2, 3, 4, 9, 9, 10, 11}},
        {"7", 10, {7}},
        {"-1", 10, {9}},
        {"3,5,8", 10, {3, 5, 8}},
        {" 1 : 4 , -2 ", 6, {1, 2, 3, 4}},
        {"+2:+4", 6, {2, 3}},
    };
    for (const Case& c : cases) {
      CAPTURE(c.text);
      CAPTURE(c.length);
      CHECK(select_ids(c.text, c.length) == c.expected);
    }
  }

  TEST_CASE("an index outside the store is an error naming the index and length") {
    Result<std::vector<SelectionItem>> items = parse_selection("1,12");
    REQUIRE(items.is_ok());
    Result<std::vector<uint64_t>> ids = resolve_selection(items.value(), 10);
    REQUIRE(!ids.is_ok());
    CHECK(ids.status().code() == StatusCode::kInvalidArgument);
    CHECK(ids.status().message() == "index 12 is out of range for a store of 10 records");

    Result<std::vector<uint64_t>> negative = resolve_selection(parse_selection("-11").value(), 10);
    REQUIRE(!negative.is_ok());
    CHECK(negative.status().message() == "index -11 is out of range for a store of 10 records");
    CHECK(select_ids("-10", 10) == std::vector<uint64_t>{0});
  }

  TEST_CASE("a zero step given directly to resolve_selection is refused") {
    SelectionItem item;
    item.is_slice = true;
    item.step = 0;
    CHECK(!resolve_selection({item}, 10).is_ok());
  }

  TEST_CASE("malformed selections are refused with the text quoted") {
    CHECK(parse_error("3,,5") == "invalid selection '3,,5': empty item");
    CHECK(parse_error("") == "invalid selection '': empty selection");
    CHECK(parse_error("  ") == "invalid selection '  ': empty selection");
    CHECK(parse_error("1,") == "invalid selection '1,': empty item");
    CHECK(parse_error("::0") == "invalid selection '::0': slice step cannot be zero");
    CHECK(parse_error("1:x") == "invalid selection '1:x': 'x' is not an integer");
    CHECK(parse_error("abc") == "invalid selection 'abc': 'abc' is not an integer");
    CHECK(parse_error("1.5") == "invalid selection '1.5': '1.5' is not an integer");
    CHECK(parse_error("+-3") == "invalid selection '+-3': '+-3' is not an integer");
    CHECK(parse_error("1 2") == "invalid selection '1 2': '1 2' is not an integer");
    CHECK(parse_error("1:2:3:4") == "invalid selection '1:2:3:4': item '1:2:3:4' has more than two ':'");
    CHECK(parse_error("9223372036854775808") ==
          "invalid selection '9223372036854775808': '9223372036854775808' is out of the int64 range");
  }

  TEST_CASE("index files skip blank lines and resolve negative indices") {
    Result<std::vector<uint64_t>> ids = read_indices_from("3\n\n  -1  \r\n0\n   \n7", 10);
    REQUIRE_MESSAGE(ids.is_ok(), ids.status().message());
    CHECK(ids.value() == std::vector<uint64_t>{3, 9, 0, 7});
    CHECK(read_indices_from("", 10).value().empty());
  }

  TEST_CASE("index file errors name the stream and line") {
    Result<std::vector<uint64_t>> bad = read_indices_from("1\n2\n\nabc\n", 10);
    REQUIRE(!bad.is_ok());
    CHECK(bad.status().code() == StatusCode::kInvalidArgument);
    CHECK(bad.status().message() == "'idx.txt' line 4: 'abc' is not an integer");

    Result<std::vector<uint64_t>> out_of_range = read_indices_from("1\n12\n", 10);
    REQUIRE(!out_of_range.is_ok());
    CHECK(out_of_range.status().message() == "'idx.txt' line 2: index 12 is out of range for a store of 10 records");
  }
}

}  // namespace zrec::cli
