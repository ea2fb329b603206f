// Tests for the "did you mean" helpers: edit_distance (optimal string alignment) and
// closest_name's typo threshold.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/suggest.h"

namespace zrec::cli {

TEST_SUITE("suggest") {
  TEST_CASE("edit_distance counts insertions, deletions, substitutions and adjacent swaps as one") {
    CHECK(edit_distance("", "") == 0);
    CHECK(edit_distance("abc", "") == 3);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(edit_distance("create", "create") == 0);
    CHECK(edit_distance("crate", "create") == 1);    // insertion
    CHECK(edit_distance("creates", "create") == 1);  // deletion
    CHECK(edit_distance("creste", "create") == 1);   // substitution
    CHECK(edit_distance("digets", "digest") == 1);   // swap of adjacent characters
    CHECK(edit_distance("ca", "abc") == 3);          // OSA: no edit of a swapped pair
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("threds", "threads") == 1);
    CHECK(edit_distance("abc", "xyz") == 3);
  }

  TEST_CASE("closest_name suggests near commands and options only") {
    const std::vector<std::string> commands = {"create", "append-npy", "append-files", "cat",
                                               "info",   "digest",     "verify",       "concat"};
    CHECK(closest_name("crate", commands) == "create");
    CHECK(closest_name("digets", commands) == "digest");
    CHECK(closest_name("cta", commands) == "cat");
    CHECK(closest_name("inof", commands) == "info");
    CHECK(closest_name("verfiy", commands) == "verify");
    CHECK(closest_name("append-npz", commands) == "append-npy");
    CHECK(closest_name("apend-files", commands) == "append-files");
    CHECK(closest_name("xyzzy", commands).empty());
    CHECK(closest_name("append", commands).empty());  // 4 edits from append-npy: no guess
    CHECK(closest_name("", commands).empty());

    const std::vector<std::string> options = {"--threads", "--wait", "--quiet", "--json", "--dense", "--dtype"};
    CHECK(closest_name("--threds", options) == "--threads");
    CHECK(closest_name("--thread", options) == "--threads");
    CHECK(closest_name("-threads", options) == "--threads");  // dashes are not counted
    CHECK(closest_name("--jsno", options) == "--json");
    CHECK(closest_name("--bogus", options).empty());
    CHECK(closest_name("--", options).empty());
  }

  TEST_CASE("closest_name's threshold grows with the length of the name") {
    const std::vector<std::string> five = {"abcde"};
    CHECK(closest_name("abcdx", five) == "abcde");  // 1 edit of 5
    CHECK(closest_name("abcxy", five).empty());     // 2 edits of 5: too many
    const std::vector<std::string> eight = {"abcdefgh"};
    CHECK(closest_name("abcdefxy", eight) == "abcdefgh");  // 2 of 8
    CHECK(closest_name("abcdexyz", eight).empty());        // 3 of 8
    const std::vector<std::string> nine = {"abcdefghi"};
    CHECK(closest_name("abcdefxyz", nine) == "abcdefghi");  // 3 of 9
  }

  TEST_CASE("closest_name breaks a tie by the candidates' order") {
    CHECK(closest_name("cax", {"cab", "car"}) == "cab");
    CHECK(closest_name("cax", {"car", "cab"}) == "car");
    CHECK(closest_name("cat", {"cab", "cat"}) == "cat");  // an exact match beats any near one
  }
}

}  // namespace zrec::cli
