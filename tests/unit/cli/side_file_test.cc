// Tests for apps/cli/os/side_file: the files an option names beside the stores are
// regular files, opened without ever blocking; a list may also come from stdin or an
// anonymous pipe (bash's <(cmd)).
#include "cli/os/side_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include <doctest/doctest.h>

#include "testutil.h"

namespace zrec::cli {
namespace {

TEST_CASE("a FIFO is refused at once, naming the option and the file") {
  test::TempDir dir;
  const std::string fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Without O_NONBLOCK each of these would wait for a writer forever.
  CHECK(open_side_file(fifo, "--dict").status().message() == "--dict '" + fifo + "' is a FIFO, not a regular file");
  CHECK(read_side_file(fifo, "--vocab", 1024).status().message() ==
        "--vocab '" + fifo + "' is a FIFO, not a regular file");
  CHECK(SideInput::open(fifo, "--indices-from").status().message() ==
        "--indices-from '" + fifo + "' is a FIFO, not a regular file");
  CHECK(check_side_file(fifo, "--plan").message() == "--plan '" + fifo + "' is a FIFO, not a regular file");
  CHECK(check_side_file(fifo, "--files-from", true).message() ==
        "--files-from '" + fifo + "' is a FIFO, not a regular file");
}

TEST_CASE("devices and directories are refused, and a missing file is left to the opener") {
  test::TempDir dir;
  CHECK(open_side_file("/dev/null", "--keys").status().message() ==
        "--keys '/dev/null' is a character device, not a regular file");
  CHECK(open_side_file(dir.path(), "--keys").status().message() ==
        "--keys '" + dir.path() + "' is a directory, not a regular file");
  CHECK(check_side_file(dir / "none", "--plan").is_ok());
  CHECK(open_side_file(dir / "none", "--keys").status().code() == StatusCode::kNotFound);
}

TEST_CASE("a regular file is read whole, up to its limit") {
  test::TempDir dir;
  test::write_file(dir / "d", {1, 2, 3});
  auto bytes = read_side_file(dir / "d", "--dict", 3);
  REQUIRE_OK(bytes);
  CHECK(bytes.value() == std::vector<uint8_t>{1, 2, 3});
  CHECK(read_side_file(dir / "d", "--dict", 2).status().message() ==
        "--dict '" + (dir / "d") + "' is larger than 2 bytes");
}

TEST_CASE("an anonymous pipe is a list SideInput reads, as <(cmd) gives one") {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::write(fds[1], "7\n", 2) == 2);
  ::close(fds[1]);
  const std::string path = "/proc/self/fd/" + std::to_string(fds[0]);
  CHECK(check_side_file(path, "--files-from", true).is_ok());
  CHECK_FALSE(check_side_file(path, "--plan").is_ok());  // whole-file side files take no pipe
  auto in = SideInput::open(path, "--indices-from");
  REQUIRE_OK(in);
  char buf[4];
  auto got = in.value().stream().read_some(buf, sizeof buf);
  REQUIRE_OK(got);
  CHECK(std::string(buf, got.value()) == "7\n");
  ::close(fds[0]);
}

}  // namespace
}  // namespace zrec::cli
