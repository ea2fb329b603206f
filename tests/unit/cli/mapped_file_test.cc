// Tests for MappedFile (apps/cli/os/mapped_file.h): a file's bytes from an offset, and
// a file truncated under its mapping read as zeros past the new end, marked shrunk,
// instead of killing the process with SIGBUS.
#include "cli/os/mapped_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <doctest/doctest.h>

using zrec::cli::MappedFile;

namespace {

// A temporary file holding `bytes`, open for reading and writing.
struct TempFile {
  std::string path;
  int fd = -1;
  explicit TempFile(const std::string& bytes) {
    char name[] = "/tmp/zrec_mapped_file_testXXXXXX";
    fd = ::mkstemp(name);
    REQUIRE(fd >= 0);
    path = name;
    REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  }
  ~TempFile() {
    ::close(fd);
    ::unlink(path.c_str());
  }
};

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i % 26);
  return s;
}

}  // namespace

TEST_CASE("MappedFile: the bytes from an offset that is not page-aligned, to the end") {
  const std::string text = pattern(3 * 4096 + 123);
  TempFile f(text);
  auto map = MappedFile::map(f.fd, 5000);
  REQUIRE(map != nullptr);
  const auto bytes = map->bytes();
  CHECK(std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()) == text.substr(5000));
  map->populate(bytes.data(), bytes.size() + (1 << 20));  // past the end: clipped
  map->release_before(bytes.data() + 8192);               // released pages are no longer read
  CHECK(bytes[bytes.size() - 1] == static_cast<uint8_t>(text.back()));
  CHECK_FALSE(map->shrank());
}

TEST_CASE("MappedFile: nothing to map past the end, or not a regular file") {
  TempFile f("abc");
  CHECK(MappedFile::map(f.fd, 3) == nullptr);
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  CHECK(MappedFile::map(pipe_fds[0], 0) == nullptr);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
}

TEST_CASE("MappedFile: a file truncated under the mapping reads as zeros past its new end, marked shrunk") {
  struct sigaction before {};
  ::sigaction(SIGBUS, nullptr, &before);
  const std::string text = pattern(4 * 4096);
  TempFile f(text);
  auto map = MappedFile::map(f.fd, 0);
  REQUIRE(map != nullptr);
  const auto bytes = map->bytes();
  CHECK(bytes[4096] == static_cast<uint8_t>(text[4096]));
  REQUIRE(::ftruncate(f.fd, 4096) == 0);
  // Without the handler this read would be SIGBUS.
  std::vector<uint8_t> past(bytes.begin() + 2 * 4096, bytes.begin() + 3 * 4096);
  CHECK(past == std::vector<uint8_t>(4096, 0));
  CHECK(map->shrank());
  CHECK(bytes[10] == static_cast<uint8_t>(text[10]));  // what is still there reads as before
  map.reset();
  // The next mapping starts unmarked, and SIGBUS has its old disposition back.
  TempFile g("xyz");
  auto next = MappedFile::map(g.fd, 0);
  REQUIRE(next != nullptr);
  CHECK_FALSE(next->shrank());
  next.reset();
  struct sigaction now {};
  ::sigaction(SIGBUS, nullptr, &now);
  CHECK(reinterpret_cast<void*>(now.sa_sigaction) == reinterpret_cast<void*>(before.sa_sigaction));
}
