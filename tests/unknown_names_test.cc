// Tests for find_unknown_name: which word of a command line is reported as a mistyped
// command or option, on a small CLI11 tree shaped like zrec's (global options on the
// root, accepted after the command word too).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/unknown_names.h"

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
    CHECK(t.check({"cat", "s/", "-1"}) == "");             // a negative selection, not an option
    CHECK(t.check({"cat", "-o", "--odd", "s/"}) == "");    // -o's value
    CHECK(t.check({"cat", "-ofile", "s/"}) == "");         // an attached value
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
    CHECK(t.check({"cat", "-0", "s/"}) == "");  // -0 is not cat's: a number, as CLI11 reads it
    CHECK(t.check({"cat", "--bogus", "s/", "--also-bogus"}) == "zrec cat: unknown option '--bogus'");
    // An option of another command is unknown here.
    CHECK(t.check({"cat", "--null", "s/"}) == "zrec cat: unknown option '--null'");
  }
}

}  // namespace zrec::cli
