// RAII file descriptor with the positional I/O the format needs (docs/format.md: files are
// accessed with pread/pwrite). Every failure becomes a Status naming the path.
//
// Not storage API, so not installed: the core reads and writes every store file with it
// and defines it (src/io/file.cc, in libzrec), and the tools (the CLI, the benchmark,
// the tests) use it for their own files; a library user's files are the user's.
#pragma once

#include <sys/uio.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/status.h"

namespace zrec::io {

// errno + what we were doing + path -> Status ("cannot open 'x': No such file or
// directory"); ENOENT becomes kNotFound, everything else kIoError. The one place that
// turns errno into a Status.
Status errno_status(int err, const std::string& action, const std::string& path);

// Calls `call` (a syscall returning -1 with errno on failure) until it fails with
// anything but EINTR: a signal zrec handles (SIGINT, SIGTERM) must never turn into an
// I/O error. Interruption is noticed through the flag the handler sets instead.
template <typename Call>
auto retry_eintr(Call&& call) {
  for (;;) {
    auto r = call();
    if (!(r == -1 && errno == EINTR)) return r;
  }
}

// mkdtemp(3) / mkstemp(3) with EINTR retried: each try gets the template back with its
// "XXXXXX" ending, because a failed call may have filled it in. `tmpl` ends in "XXXXXX";
// on success it holds the name made.
bool make_temp_dir(std::string& tmpl);
int make_temp_file(std::string& tmpl);

// What a store's reader reads: bytes at offsets, a size, a name for messages. A local
// File and a remote store's file (io::RemoteFile, read by HTTP range requests:
// zrec/remote.h) are its two kinds, so a reader reads either without asking which it
// has, and only a File, which always has a descriptor, can be written, locked or mapped.
class Readable {
 public:
  virtual ~Readable() = default;
  // Reads exactly n bytes at offset; a short file is kIoError "unexpected end of file".
  virtual Status pread_exact(void* dst, size_t n, uint64_t offset) const = 0;
  virtual Result<uint64_t> size() const = 0;
  // The path, or the URL as messages show it (redact_url's).
  virtual const std::string& path() const = 0;
};

// A local file: an owned descriptor (-1 only once closed or released).
class File final : public Readable {
 public:
  File() = default;
  File(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  File(File&& other) noexcept { *this = std::move(other); }
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File() override { close(); }

  // open(2) with O_CLOEXEC added. `mode` applies with O_CREAT.
  static Result<File> open(const std::string& path, int flags, int mode = 0644);

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  const std::string& path() const override { return path_; }

  Status pread_exact(void* dst, size_t n, uint64_t offset) const override;
  // Writes all n bytes at offset, retrying short writes and EINTR.
  Status pwrite_all(const void* src, size_t n, uint64_t offset) const;
  // Writes the buffers of `iov` back to back starting at offset (pwritev, batched by
  // IOV_MAX, retrying short writes). `iov` is consumed (modified).
  Status pwritev_all(std::vector<struct iovec>& iov, uint64_t offset) const;
  // Writes all n bytes at the current position (for pipes and stdout).
  Status write_all(const void* src, size_t n) const;
  Result<uint64_t> size() const override;
  Status truncate(uint64_t length) const;
  Status sync() const;
  // Starts writing n bytes at offset back to the disk without waiting for them
  // (sync_file_range(SYNC_FILE_RANGE_WRITE)), so a later sync() finds little left to do.
  // It is not a durability barrier. A failure is reported like a failed write: the
  // kernel may hand a writeback error to this call instead of the next fsync.
  Status start_writeback(uint64_t offset, uint64_t n) const;
  void close();
  // Gives up ownership without closing (for descriptors like stdout that we borrow).
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
  std::string path_;
};

// `path_or_url` for reading: a local File, or the remote file at a URL (zrec/remote.h)
// whose first `prefetch` bytes come with the request that pins its size and validator
// (read with ctx.remote, stopped by ctx.control.cancel). The library tells the two apart
// (io::Location), not its callers.
Result<std::unique_ptr<const Readable>> open_for_reading(const std::string& path_or_url, uint64_t prefetch,
                                                         const Context& ctx);

// fsync on a directory, so that creations and renames inside it are durable.
Status sync_directory(const std::string& dir);

}  // namespace zrec::io
