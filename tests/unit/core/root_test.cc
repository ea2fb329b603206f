// Roots of named streams (zrec/dataset.h, docs/format.md §12): the marker's bytes, strictly
// parsed; creating, locking and committing it; the lock moving with each commit; stale
// temporaries removed.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "zrec/dataset.h"

#include "store/root_marker.h"
#include "store/root_writer.h"
#include "testutil.h"

using namespace zrec;

namespace {

std::string read_text(const std::string& path) {
  const auto bytes = test::read_file(path);
  return std::string(bytes.begin(), bytes.end());
}

void write_text(const std::string& path, const std::string& text) {
  test::write_file(path, std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_SUITE("root") {
  TEST_CASE("the marker's bytes: the documented example, escapes, and a round trip") {
    const RootState state{1800, {"cls", "jpg"}};
    auto bytes = encode_root_marker(state);
    REQUIRE_OK(bytes);
    CHECK(bytes.value() == "zrec-root 1\nlength 1800\nstream cls\nstream jpg\n");
    const RootState odd{0, {"a\\b", "line\nbreak", "x\ry", "\xc3\xa9t\xc3\xa9"}};
    bytes = encode_root_marker(odd);
    REQUIRE_OK(bytes);
    CHECK(bytes.value() ==
          "zrec-root 1\nlength 0\nstream a\\\\b\nstream line\\nbreak\nstream x\\ry\nstream \xc3\xa9t\xc3\xa9\n");
    auto back = decode_root_marker(bytes.value(), "m");
    REQUIRE_OK(back);
    CHECK(back.value() == odd);
    back = decode_root_marker("zrec-root 1\nlength 18446744073709551615\n", "m");
    REQUIRE_OK(back);
    CHECK(back.value().length == UINT64_MAX);
    CHECK(back.value().streams.empty());
  }

  TEST_CASE("names a marker cannot hold are refused when encoding") {
    for (const RootState& bad :
         {RootState{0, {""}}, RootState{0, {"."}}, RootState{0, {".."}}, RootState{0, {"a/b"}},
          RootState{0, {std::string("a\0b", 3)}}, RootState{0, {"b", "a"}}, RootState{0, {"a", "a"}}})
      CHECK(encode_root_marker(bad).status().code() == StatusCode::kInvalidArgument);
  }

  TEST_CASE("malformed markers are refused, naming the rule") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"", "it does not end with a newline"},
        {"zrec-root 1\nlength 3", "it does not end with a newline"},
        {"zrec-root 2\nlength 3\n", "its first line is not 'zrec-root 1'"},
        {"zrec-root 1\n", "its second line is not 'length N'"},
        {"zrec-root 1\nlength 03\n", "'length 03' is not 'length N' with N a decimal count"},
        {"zrec-root 1\nlength -3\n", "'length -3' is not 'length N' with N a decimal count"},
        {"zrec-root 1\nlength 18446744073709551616\n", "is not 'length N' with N a decimal count"},
        {"zrec-root 1\nlength \n", "is not 'length N' with N a decimal count"},
        {"zrec-root 1\nlength 3\nstream\n", "line 3 is not 'stream NAME'"},
        {"zrec-root 1\nlength 3\nstreams a\n", "line 3 is not 'stream NAME'"},
        {"zrec-root 1\nlength 3\nstream a\\q\n", "line 3 is not 'stream NAME'"},
        {"zrec-root 1\nlength 3\nstream a\r\n", "line 3 is not 'stream NAME'"},
        {"zrec-root 1\nlength 3\nstream \n", "the stream name on line 3 is empty"},
        {"zrec-root 1\nlength 3\nstream a/b\n", "the stream name on line 3 holds '/'"},
        {"zrec-root 1\nlength 3\nstream ..\n", "the stream name on line 3 is '..'"},
        {"zrec-root 1\nlength 3\nstream b\nstream a\n", "not sorted and distinct (line 4)"},
        {"zrec-root 1\nlength 3\nstream a\nstream a\n", "not sorted and distinct (line 4)"},
        {"zrec-root 1\nlength 3\nstream a\n\n", "line 4 is not 'stream NAME'"},
    };
    // Not a structured binding: clang does not let INFO's lambda capture one.
    for (const auto& one_case : cases) {
      const std::string& bytes = one_case.first;
      const std::string& why = one_case.second;
      auto r = decode_root_marker(bytes, "ds/zrec-root");
      INFO(bytes);
      REQUIRE(r.status().code() == StatusCode::kMalformed);
      CHECK(r.status().message().starts_with("malformed root marker 'ds/zrec-root': "));
      CHECK(r.status().message().find(why) != std::string::npos);
    }
  }

  TEST_CASE("create marks a directory once - open locks it - commit replaces it and keeps the lock") {
    test::TempDir dir;
    const std::string root = dir.path();
    auto none = read_root_marker(root);
    REQUIRE_OK(none);
    CHECK(!none.value().has_value());
    CHECK(RootWriter::open(root, false).status().code() == StatusCode::kNotFound);

    auto w = RootWriter::create(root, {});
    REQUIRE_OK(w);
    CHECK(read_text(dir / "zrec-root") == "zrec-root 1\nlength 0\n");
    CHECK(listing(root) == std::vector<std::string>{"zrec-root"});
    // Made already (by this or another process): create refuses, never replaces it.
    CHECK(RootWriter::create(root, {5, {"x"}}).status().code() == StatusCode::kAlreadyExists);
    // Locked: another opener is busy (flock conflicts between open file descriptions).
    auto busy = RootWriter::open(root, false);
    CHECK(busy.status().code() == StatusCode::kBusy);
    CHECK(busy.status().message() == "root '" + root + "' is locked by another process (a writer of its streams)");

    REQUIRE_OK(w.value()->commit({42, {"cls", "jpg"}}));
    CHECK(read_text(dir / "zrec-root") == "zrec-root 1\nlength 42\nstream cls\nstream jpg\n");
    CHECK(w.value()->state() == RootState{42, {"cls", "jpg"}});
    CHECK(listing(root) == std::vector<std::string>{"zrec-root"});
    // The lock moved to the new marker with the commit.
    CHECK(RootWriter::open(root, false).status().code() == StatusCode::kBusy);
    auto seen = read_root_marker(root);
    REQUIRE_OK(seen);
    CHECK(seen.value() == RootState{42, {"cls", "jpg"}});
    w.value().reset();

    auto again = RootWriter::open(root, false);
    REQUIRE_OK(again);
    CHECK(again.value()->state() == RootState{42, {"cls", "jpg"}});
    REQUIRE_OK(again.value()->remove());
    CHECK(listing(root).empty());
  }

  TEST_CASE("a marker is opened only as a regular file, and a malformed one is an error") {
    test::TempDir dir;
    write_text(dir / "target", "zrec-root 1\nlength 0\n");
    REQUIRE(::symlink((dir / "target").c_str(), (dir / "zrec-root").c_str()) == 0);
    CHECK(RootWriter::open(dir.path(), false).status().message().find("is not a regular file") != std::string::npos);
    CHECK(read_root_marker(dir.path()).status().message().find("is not a regular file") != std::string::npos);
    ::unlink((dir / "zrec-root").c_str());
    write_text(dir / "zrec-root", "zrec-root 1\nlength x\n");
    CHECK(RootWriter::open(dir.path(), false).status().code() == StatusCode::kMalformed);
    CHECK(read_root_marker(dir.path()).status().code() == StatusCode::kMalformed);
  }

  TEST_CASE("stale temporaries are removed when the lock is taken - a locked one is left") {
    test::TempDir dir;
    const std::string root = dir.path();
    { REQUIRE_OK(RootWriter::create(root, {})); }
    write_text(dir / ".zrec-root.tmp-abcdef", "zrec-root 1\nlength 7\n");  // a commit killed before its rename
    const int held = ::open((dir / ".zrec-root.tmp-ghijkl").c_str(), O_RDWR | O_CREAT, 0644);
    REQUIRE(held >= 0);
    REQUIRE(::flock(held, LOCK_EX) == 0);              // a live writer's
    write_text(dir / ".zrec-root.tmp-too-long", "x");  // not mkstemp's name: not zrec's
    auto w = RootWriter::open(root, false);
    REQUIRE_OK(w);
    CHECK(listing(root) == std::vector<std::string>{".zrec-root.tmp-ghijkl", ".zrec-root.tmp-too-long", "zrec-root"});
    ::close(held);
  }

  TEST_CASE("a lock taken on a marker that was replaced meanwhile is let go for the current one") {
    test::TempDir dir;
    const std::string root = dir.path();
    auto w = RootWriter::create(root, {3, {"a"}});
    REQUIRE_OK(w);
    // The old inode, as a waiter opened it before the commit below.
    const int old_fd = ::open((dir / "zrec-root").c_str(), O_RDWR);
    REQUIRE(old_fd >= 0);
    REQUIRE_OK(w.value()->commit({4, {"a"}}));
    // The old marker's lock is free now, but it guards nothing: open() finds the current
    // marker locked.
    CHECK(::flock(old_fd, LOCK_EX | LOCK_NB) == 0);
    ::close(old_fd);
    CHECK(RootWriter::open(root, false).status().code() == StatusCode::kBusy);
    w.value().reset();
    auto now = RootWriter::open(root, false);
    REQUIRE_OK(now);
    CHECK(now.value()->state().length == 4);
  }
}
