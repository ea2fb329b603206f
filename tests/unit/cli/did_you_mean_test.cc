// Tests for the "did you mean" helpers: edit_distance (optimal string alignment) and
// closest_name's typo threshold.
#include "cli/app/did_you_mean.h"

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <doctest/doctest.h>

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

// Tests for find_unknown_name: which word of a command line is reported as a mistyped
// command or option, on a small CLI11 tree shaped like zrec's (global options on the
// root, accepted after the command word too).
namespace zrec::cli {

namespace {

struct Tree {
  CLI::App root{"test"};
  size_t threads = 0;
  bool verbose = false;
  std::string store, output, selection;
  bool null = false;

  Tree() {
    root.name("zrec");
    root.add_option("--threads", threads);
    root.add_flag("-v,--verbose", verbose);
    CLI::App* cat = root.add_subcommand("cat", "Write records");
    cat->add_option("store", store);
    cat->add_option("selection", selection);
    cat->add_option("-o,--output", output);
    CLI::App* files = root.add_subcommand("append-files", "Append files");
    files->add_flag("-0,--null", null);
    CLI::App* hidden = root.add_subcommand("completion", "Hidden");
    hidden->group("");
  }

  std::string check(const std::vector<std::string>& args) {
    auto bad = find_unknown_name(root, args);
    return bad ? bad->where + ": " + bad->message : "";
  }
};

}  // namespace

TEST_SUITE("unknown_names") {
  TEST_CASE("known command lines pass") {
    Tree t;
    CHECK(t.check({"cat", "s/"}) == "");
    CHECK(t.check({"-v", "--threads", "2", "cat", "s/", "0:10"}) == "");
    CHECK(t.check({"--threads=2", "cat", "--threads", "3", "-o", "out.npy", "s/"}) == "");
    CHECK(t.check({"cat", "s/", "-1"}) == "");           // a negative selection, not an option
    CHECK(t.check({"cat", "-o", "--odd", "s/"}) == "");  // -o's value
    CHECK(t.check({"cat", "-ofile", "s/"}) == "");       // an attached value
    CHECK(t.check({"cat", "--", "--not-an-option"}) == "");
    CHECK(t.check({"append-files", "-0", "s/", "-"}) == "");  // -0 is an option there
    CHECK(t.check({"completion", "bash"}) == "");             // hidden, yet known
    CHECK(t.check({}) == "");
  }

  TEST_CASE("the first unknown name is reported where it was typed") {
    Tree t;
    CHECK(t.check({"catt"}) == "zrec: unknown command 'catt'; did you mean 'cat'?");
    CHECK(t.check({"crate"}) == "zrec: unknown command 'crate'");  // 2 edits from cat: no guess
    CHECK(t.check({"-v", "cta", "s/"}) == "zrec: unknown command 'cta'; did you mean 'cat'?");
    CHECK(t.check({"completon"}) == "zrec: unknown command 'completon'");  // hidden: never suggested
    CHECK(t.check({"cat", "--outptu", "x", "s/"}) == "zrec cat: unknown option '--outptu'; did you mean '--output'?");
    CHECK(t.check({"cat", "s/", "--threds=2"}) == "zrec cat: unknown option '--threds'; did you mean '--threads'?");
    CHECK(t.check({"--thread", "2", "cat"}) == "zrec: unknown option '--thread'; did you mean '--threads'?");
    CHECK(t.check({"cat", "-x", "s/"}) == "zrec cat: unknown option '-x'");
    CHECK(t.check({"cat", "s/", "-0"}) == "");  // -0 is not cat's: a number, its SELECTION
    // A number before any operand is no selection: an option as zstd spells a level.
    CHECK(t.check({"cat", "-0", "s/"}) == "zrec cat: unknown option '-0'");
    CHECK(t.check({"-19", "cat", "s/"}) == "zrec: unknown option '-19'");
    CHECK(t.check({"cat", "--bogus", "s/", "--also-bogus"}) == "zrec cat: unknown option '--bogus'");
    // An option of another command is unknown here.
    CHECK(t.check({"cat", "--null", "s/"}) == "zrec cat: unknown option '--null'");
  }
}

}  // namespace zrec::cli
