// Tests for append_line_field: the escapes of the --keys and --manifest lines.
#include "cli/formats/line_field.h"

#include <string>

#include <doctest/doctest.h>

namespace zrec::cli {

TEST_SUITE("line_field") {
  TEST_CASE("a whole-line field escapes backslash, newline and CR, keeps tab") {
    std::string out = "k:";
    append_line_field(out, std::string_view("a\\b\nc\rd\te", 9), LineField::kWholeLine);
    CHECK(out == "k:a\\\\b\\nc\\rd\te");
  }

  TEST_CASE("a tab-separated field escapes tab too") {
    std::string out;
    append_line_field(out, "a\tb\\\n", LineField::kTabSeparated);
    CHECK(out == "a\\tb\\\\\\n");
  }

  TEST_CASE("other bytes, NUL and UTF-8 included, pass through") {
    std::string out;
    append_line_field(out, std::string_view("x\0\xc3\xa9", 4), LineField::kTabSeparated);
    CHECK(out == std::string("x\0\xc3\xa9", 4));
  }
}

}  // namespace zrec::cli
