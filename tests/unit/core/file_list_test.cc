// Tests for support/file_list: the one rule every list of file names follows (CRLF,
// NUL-separated lists, blank lines, over-long names, NUL bytes in newline lists), the
// same however the input is cut into pieces, and errors that name list and line.
#include "zrec_support/file_list.h"

#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "testutil.h"

namespace zrec::cli {
namespace {

using namespace std::string_literals;

// The names `text` holds, fed in pieces of `piece` bytes (0: all at once).
std::vector<std::string> names_of(const std::string& text, ListSeparator sep, size_t piece = 0) {
  std::vector<std::string> out;
  FileListParser parser("list.txt", sep, out);
  if (piece == 0) {
    REQUIRE_OK(parser.add(text));
  } else {
    for (size_t at = 0; at < text.size(); at += piece) REQUIRE_OK(parser.add(std::string_view(text).substr(at, piece)));
  }
  REQUIRE_OK(parser.finish());
  return out;
}

// The error `text` gives, fed at once.
std::string error_of(const std::string& text, ListSeparator sep) {
  std::vector<std::string> out;
  FileListParser parser("list.txt", sep, out);
  Status s = parser.add(text);
  if (s.is_ok()) s = parser.finish();
  REQUIRE(!s.is_ok());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  return s.message();
}

using V = std::vector<std::string>;

TEST_SUITE("file_list") {
  TEST_CASE("newline lists: LF ends a name, one CR before it is dropped, blank lines skipped") {
    const auto nl = ListSeparator::kNewline;
    CHECK(names_of("a\nb c\n", nl) == V{"a", "b c"});
    CHECK(names_of("a\r\nb\r\n", nl) == V{"a", "b"});      // CRLF list
    CHECK(names_of("a\r\nlast\r", nl) == V{"a", "last"});  // CR before the end of input
    CHECK(names_of("a\r\r\n", nl) == V{"a\r"});            // only one CR is a line end's
    CHECK(names_of("x\ry\n", nl) == V{"x\ry"});            // a CR inside a name stays
    CHECK(names_of("\n\na\n\r\n\nb", nl) == V{"a", "b"});  // blank lines, no final LF
    CHECK(names_of(" sp ace \n", nl) == V{" sp ace "});    // no trimming of spaces
    CHECK(names_of("", nl).empty());
  }

  TEST_CASE("NUL-separated lists: NUL ends a name, LF and CR are name bytes") {
    const auto nul = ListSeparator::kNul;
    CHECK(names_of("a\0b\nc\0"s, nul) == V{"a", "b\nc"});
    CHECK(names_of("a\r\0\0\0b"s, nul) == V{"a\r", "b"});  // empty names skipped, CR kept
    CHECK(names_of("only\n", nul) == V{"only\n"});
  }

  TEST_CASE("the names are the same however the input is cut") {
    std::string text = "first\r\n\nsecond name\r\nx\ry\r\n";
    text.append(kMaxPathBytes, 'p');
    text += "\r\nend";
    const V whole = names_of(text, ListSeparator::kNewline);
    CHECK(whole.size() == 5);
    CHECK(whole[3].size() == kMaxPathBytes);  // the longest name, followed by a CR: allowed
    for (size_t piece : {1, 2, 3, 7, 4096, 4097}) CHECK(names_of(text, ListSeparator::kNewline, piece) == whole);
    std::string nul_text = "a\0\0bc\0d\r\n\0"s;
    nul_text.append(kMaxPathBytes, 'q');
    for (size_t piece : {1, 2, 5, 4096})
      CHECK(names_of(nul_text, ListSeparator::kNul, piece) == names_of(nul_text, ListSeparator::kNul));
  }

  TEST_CASE("a name over kMaxPathBytes is an error naming the list and its line") {
    const std::string long_name(kMaxPathBytes + 1, 'n');
    CHECK(error_of("ok\n\n" + long_name + "\n", ListSeparator::kNewline) ==
          "'list.txt' line 3 is longer than 4096 bytes, more than any path: one name per line (or --null for "
          "NUL-separated names)");
    CHECK(error_of("ok\0"s + long_name, ListSeparator::kNul) ==
          "'list.txt' name 2 is longer than 4096 bytes, more than any path: names must be NUL-separated");
    // Fed in pieces (a list without separators): the error comes once the limit is passed.
    std::vector<std::string> out;
    FileListParser parser("-", ListSeparator::kNewline, out);
    Status s;
    size_t fed = 0;
    while (s.is_ok() && fed < (size_t{1} << 20)) {
      s = parser.add(std::string(1000, 'z'));
      fed += 1000;
    }
    CHECK(s.message() ==
          "'-' line 1 is longer than 4096 bytes, more than any path: one name per line (or --null "
          "for NUL-separated names)");
    CHECK(fed == 5000);
  }

  TEST_CASE("a NUL byte in a newline list is an error naming its line") {
    CHECK(error_of("a\nb\0c\n"s, ListSeparator::kNewline) ==
          "'list.txt' line 2 holds a NUL byte, which no path can: one name per line (--null reads NUL-separated "
          "names, as find -print0 writes them)");
  }

  TEST_CASE("read_file_list reads a file and names one it cannot open") {
    test::TempDir dir;
    const std::string list = dir / "list";
    const std::string text = "one\r\ntwo\n\nthree";
    test::write_file(list, std::vector<uint8_t>(text.begin(), text.end()));
    V names{"before"};
    REQUIRE_OK(read_file_list(list, ListSeparator::kNewline, names));
    CHECK(names == V{"before", "one", "two", "three"});
    Status s = read_file_list(dir / "missing", ListSeparator::kNewline, names);
    CHECK(!s.is_ok());
    CHECK(s.message().find("missing") != std::string::npos);
  }
}

}  // namespace
}  // namespace zrec::cli
