// Tests for cli/formats/path_name.h: the one rule for trailing slashes in the names the
// commands take (DEST, roots, outputs).
#include "cli/formats/path_name.h"

#include <doctest/doctest.h>

namespace zrec::cli {

TEST_SUITE("path_name") {
  TEST_CASE("trailing slashes go, a lone root stays") {
    CHECK(strip_trailing_slashes("ds") == "ds");
    CHECK(strip_trailing_slashes("ds//") == "ds");
    CHECK(strip_trailing_slashes("a/b/") == "a/b");
    CHECK(strip_trailing_slashes("/") == "/");
    CHECK(strip_trailing_slashes("//") == "/");
    CHECK(strip_trailing_slashes("") == "");
  }

  TEST_CASE("base_name and parent_directory read the path without its trailing slashes") {
    CHECK(base_name("a/b/ds/") == "ds");
    CHECK(base_name("ds") == "ds");
    CHECK(base_name("/x") == "x");
    CHECK(parent_directory("ds/") == ".");
    CHECK(parent_directory("a/b") == "a");
    CHECK(parent_directory("a/b//") == "a");
    CHECK(parent_directory("/x") == "/");
  }
}

}  // namespace zrec::cli
