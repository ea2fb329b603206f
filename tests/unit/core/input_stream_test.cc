// Tests for io::InputStream: buffering, short reads, EOF, pipes, stdin and errors.
#include "zrec_support/input_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::io {
namespace {

// A scratch directory removed (with the files the test put in it) at scope exit.
class ScratchDir {
 public:
  ScratchDir() {
    char tmpl[] = "/tmp/zrec_input_stream_test.XXXXXX";
    path_ = ::mkdtemp(tmpl);
  }
  ~ScratchDir() {
    for (const auto& f : files_) ::unlink(f.c_str());
    ::rmdir(path_.c_str());
  }
  std::string write(const std::string& name, const std::string& bytes) {
    std::string p = path_ + "/" + name;
    FILE* f = std::fopen(p.c_str(), "wb");
    REQUIRE(f != nullptr);
    REQUIRE(std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size());
    std::fclose(f);
    files_.push_back(p);
    return p;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>(i * 7 + 3);
  return s;
}

bool fd_is_open(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

}  // namespace

TEST_SUITE("input_stream") {
  TEST_CASE("open of a missing file is not_found with the path and strerror text") {
    auto s = InputStream::open("/nonexistent-zrec-dir/x.npy");
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().code() == StatusCode::kNotFound);
    CHECK(s.status().message() == "cannot open '/nonexistent-zrec-dir/x.npy': No such file or directory");
  }

  TEST_CASE("open of a directory is an io_error saying so") {
    ScratchDir dir;
    auto s = InputStream::open(dir.path());
    REQUIRE_FALSE(s.is_ok());
    CHECK(s.status().code() == StatusCode::kIoError);
    CHECK(s.status().message() == "cannot open '" + dir.path() + "': Is a directory");
  }

  TEST_CASE("reads a file through a small buffer and tracks the position") {
    ScratchDir dir;
    const std::string data = pattern(100);
    const std::string path = dir.write("f.bin", data);
    auto opened = InputStream::open(path);
    REQUIRE(opened.is_ok());
    InputStream& in = opened.value();
    CHECK(in.name() == path);
    CHECK(in.position() == 0);

    std::string got(100, '\0');
    auto r = in.read_full(got.data(), 10);
    REQUIRE(r.is_ok());
    CHECK(*r == 10);
    CHECK(in.position() == 10);
    r = in.read_full(got.data() + 10, 90);
    REQUIRE(r.is_ok());
    CHECK(*r == 90);
    CHECK(got == data);
    CHECK(in.position() == 100);
    auto eof = in.at_eof();
    REQUIRE(eof.is_ok());
    CHECK(*eof);
  }

  TEST_CASE("read_some never returns more than the buffered bytes and 0 only at EOF") {
    ScratchDir dir;
    const std::string data = pattern(10);
    const std::string path = dir.write("f.bin", data);
    int fd = ::open(path.c_str(), O_RDONLY);
    REQUIRE(fd >= 0);
    {
      InputStream in(fd, "f.bin", {}, 4);
      char buf[16];
      auto r = in.read_some(buf, 3);  // fills 4, hands out 3
      REQUIRE(r.is_ok());
      CHECK(*r == 3);
      r = in.read_some(buf, 3);  // only 1 left in the buffer
      REQUIRE(r.is_ok());
      CHECK(*r == 1);
      CHECK(in.position() == 4);
      r = in.read_some(buf, 0);
      REQUIRE(r.is_ok());
      CHECK(*r == 0);
      r = in.read_some(buf, 16);  // >= buffer size: goes straight to the descriptor
      REQUIRE(r.is_ok());
      CHECK(*r == 6);
      CHECK(std::string(buf, 6) == data.substr(4));
      r = in.read_some(buf, 16);
      REQUIRE(r.is_ok());
      CHECK(*r == 0);
      CHECK(in.position() == 10);
    }
    CHECK(fd_is_open(fd));  // not owned: the stream must not close it
    ::close(fd);
  }

  TEST_CASE("read_full returns the short count when input ends first") {
    ScratchDir dir;
    const std::string path = dir.write("f.bin", pattern(5));
    auto in = InputStream::open(path);
    REQUIRE(in.is_ok());
    char buf[8];
    auto r = in->read_full(buf, 8);
    REQUIRE(r.is_ok());
    CHECK(*r == 5);
    r = in->read_full(buf, 8);
    REQUIRE(r.is_ok());
    CHECK(*r == 0);
    CHECK(in->position() == 5);
  }

  TEST_CASE("at_eof on an empty file is true and does not consume") {
    ScratchDir dir;
    const std::string path = dir.write("empty.bin", "");
    auto in = InputStream::open(path);
    REQUIRE(in.is_ok());
    auto eof = in->at_eof();
    REQUIRE(eof.is_ok());
    CHECK(*eof);
    CHECK(in->position() == 0);
  }

  TEST_CASE("at_eof peeks without moving the position") {
    ScratchDir dir;
    const std::string path = dir.write("f.bin", "ab");
    auto in = InputStream::open(path);
    REQUIRE(in.is_ok());
    auto eof = in->at_eof();
    REQUIRE(eof.is_ok());
    CHECK_FALSE(*eof);
    CHECK(in->position() == 0);
    char buf[2];
    CHECK(in->read_full(buf, 2).value() == 2);
    CHECK(std::string(buf, 2) == "ab");
  }

  TEST_CASE("read_full gathers a pipe written in small pieces, even non-blocking") {
    for (bool nonblocking : {false, true}) {
      CAPTURE(nonblocking);
      int p[2];
      REQUIRE(::pipe(p) == 0);
      if (nonblocking) ::fcntl(p[0], F_SETFL, ::fcntl(p[0], F_GETFL) | O_NONBLOCK);
      const std::string data = pattern(3000);
      std::thread writer([&] {
        for (size_t off = 0; off < data.size(); off += 700) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          size_t n = std::min<size_t>(700, data.size() - off);
          if (::write(p[1], data.data() + off, n) != static_cast<ssize_t>(n)) std::abort();
        }
        ::close(p[1]);
      });
      InputStream in(p[0], "pipe", {}, 1024);
      std::string got(4000, '\0');
      auto r = in.read_full(got.data(), got.size());
      writer.join();
      REQUIRE(r.is_ok());
      CHECK(*r == data.size());
      got.resize(*r);
      CHECK(got == data);
      auto eof = in.at_eof();
      REQUIRE(eof.is_ok());
      CHECK(*eof);
      ::close(p[0]);
    }
  }

  TEST_CASE("open(\"-\") reads stdin and leaves fd 0 open") {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    int saved = ::dup(STDIN_FILENO);
    REQUIRE(saved >= 0);
    REQUIRE(::dup2(p[0], STDIN_FILENO) == STDIN_FILENO);
    ::close(p[0]);
    REQUIRE(::write(p[1], "hello", 5) == 5);
    ::close(p[1]);
    {
      auto in = InputStream::open("-");
      REQUIRE(in.is_ok());
      CHECK(in->name() == "-");
      char buf[8];
      auto r = in->read_full(buf, 8);
      REQUIRE(r.is_ok());
      CHECK(*r == 5);
      CHECK(std::string(buf, 5) == "hello");
    }
    CHECK(fd_is_open(STDIN_FILENO));
    ::dup2(saved, STDIN_FILENO);
    ::close(saved);
  }

  TEST_CASE("a read error is an io_error naming the stream") {
    int p[2];
    REQUIRE(::pipe(p) == 0);
    InputStream in(p[1], "out-end", {}, 16);  // reading the write end fails with EBADF
    char buf[4];
    auto r = in.read_some(buf, 4);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().code() == StatusCode::kIoError);
    CHECK(r.status().message() == "cannot read 'out-end': Bad file descriptor");
    ::close(p[0]);
    ::close(p[1]);
  }

  TEST_CASE("moving a stream transfers the descriptor and the buffered bytes") {
    ScratchDir dir;
    const std::string data = pattern(50);
    const std::string path = dir.write("f.bin", data);
    auto opened = InputStream::open(path);
    REQUIRE(opened.is_ok());
    InputStream a = std::move(opened.value());
    char buf[64];
    REQUIRE(a.read_full(buf, 10).value() == 10);
    InputStream b = std::move(a);
    CHECK(b.position() == 10);
    CHECK(b.name() == path);
    REQUIRE(b.read_full(buf + 10, 40).value() == 40);
    CHECK(std::string(buf, 50) == data);

    auto other = InputStream::open(path);
    REQUIRE(other.is_ok());
    b = std::move(other.value());  // closes b's old descriptor, takes the new one
    CHECK(b.position() == 0);
    REQUIRE(b.read_full(buf, 50).value() == 50);
    CHECK(std::string(buf, 50) == data);
  }

  TEST_CASE("skip seeks in a file (buffered bytes first), reads and drops from a pipe, and stops at the end") {
    ScratchDir dir;
    const std::string data = pattern(100000);
    const std::string path = dir.write("s.bin", data);
    auto opened = InputStream::open(path);
    REQUIRE(opened.is_ok());
    InputStream in(opened.value().fd(), path, {}, 64);
    char buf[16];
    REQUIRE(in.read_full(buf, 10).value() == 10);  // the buffer holds bytes 10..63 now
    CHECK(in.skip(20).value() == 20);              // from the buffer
    CHECK(in.position() == 30);
    CHECK(in.skip(50000).value() == 50000);  // the rest of the buffer, then a seek
    CHECK(in.position() == 50030);
    CHECK(::lseek(in.fd(), 0, SEEK_CUR) == 50030);  // seeked, not read
    REQUIRE(in.read_full(buf, 16).value() == 16);
    CHECK(std::string(buf, 16) == data.substr(50030, 16));
    CHECK(in.skip(1000000).value() == 100000 - 50046);  // short at the end
    CHECK(in.at_eof().value());

    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::thread writer([&] {
      size_t done = 0;
      while (done < data.size()) done += static_cast<size_t>(::write(fds[1], data.data() + done, data.size() - done));
      ::close(fds[1]);
    });
    InputStream pipe_in(fds[0], "-", {}, 4096);
    CHECK(pipe_in.skip(70000).value() == 70000);
    REQUIRE(pipe_in.read_full(buf, 16).value() == 16);
    CHECK(std::string(buf, 16) == data.substr(70000, 16));
    CHECK(pipe_in.skip(50000).value() == 100000 - 70016);
    writer.join();
    ::close(fds[0]);
  }
}

}  // namespace zrec::io
