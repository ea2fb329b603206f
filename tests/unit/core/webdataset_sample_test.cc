// Tests for cli/formats/webdataset_sample.h: WebDataset's split of member paths and its
// grouping of consecutive members into samples.
#include "cli/formats/webdataset_sample.h"

#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::cli {

namespace {

// The samples a list of member paths makes, each as "KEY: member member ...", fed as
// append-tar feeds them.
std::vector<std::string> group(const std::vector<std::string>& paths) {
  std::vector<std::string> samples;
  SampleGrouper g;
  const auto close = [&] {
    std::string s = g.key() + ":";
    for (const auto& m : g.members()) s += " " + m;
    samples.push_back(s);
    g.clear();
  };
  for (const auto& path : paths) {
    const MemberName n = split_member_path(path);
    if (n.ext.empty()) continue;
    if (g.ends_sample(n.key)) close();
    g.add(n.key, path);
  }
  if (g.open()) close();
  return samples;
}

}  // namespace

TEST_SUITE("webdataset_sample") {
  TEST_CASE("the key ends at the first dot of the basename, the extension is the rest") {
    const MemberName a = split_member_path("a/0001.seg.png");
    CHECK(a.key == "a/0001");
    CHECK(a.ext == "seg.png");
    const MemberName dotted_dir = split_member_path("v1.2/x.cls");
    CHECK(dotted_dir.key == "v1.2/x");
    CHECK(dotted_dir.ext == "cls");
    const MemberName none = split_member_path("dir.d/README");
    CHECK(none.key == "dir.d/README");
    CHECK(none.ext.empty());
    const MemberName hidden = split_member_path(".jpg");
    CHECK(hidden.key.empty());
    CHECK(hidden.ext == "jpg");
    const MemberName trailing = split_member_path("k.");
    CHECK(trailing.key == "k");
    CHECK(trailing.ext.empty());
  }

  TEST_CASE("consecutive members with one key form a sample") {
    CHECK(group({"a/0001.jpg", "a/0001.cls", "a/0002.jpg", "a/0002.cls"}) ==
          std::vector<std::string>{"a/0001: a/0001.jpg a/0001.cls", "a/0002: a/0002.jpg a/0002.cls"});
  }

  TEST_CASE("a member without an extension neither joins nor ends a sample") {
    CHECK(group({"k.jpg", "LICENSE", "k.cls", "m.jpg"}) == std::vector<std::string>{"k: k.jpg k.cls", "m: m.jpg"});
  }

  TEST_CASE("a key seen again after another is a new sample, as WebDataset reads it") {
    CHECK(group({"k.jpg", "m.jpg", "k.cls"}) == std::vector<std::string>{"k: k.jpg", "m: m.jpg", "k: k.cls"});
  }

  TEST_CASE("nothing is open before the first member and after clear") {
    SampleGrouper g;
    CHECK_FALSE(g.open());
    CHECK_FALSE(g.ends_sample("k"));
    g.add("k", "k.jpg");
    CHECK(g.open());
    CHECK_FALSE(g.ends_sample("k"));
    CHECK(g.ends_sample("m"));
    g.clear();
    CHECK_FALSE(g.open());
    CHECK(g.members().empty());
    CHECK_FALSE(g.ends_sample("m"));
  }
}

}  // namespace zrec::cli
