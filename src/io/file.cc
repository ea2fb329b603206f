// Positional file I/O with EINTR retry and short-transfer loops.
#include "zrec_support/file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace zrec::io {

Status errno_status(int err, const std::string& action, const std::string& path) {
  std::string msg = action + " '" + path + "': " + std::strerror(err);
  return Status(err == ENOENT ? StatusCode::kNotFound : StatusCode::kIoError, std::move(msg));
}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.fd_ = -1;
  }
  return *this;
}

Result<File> File::open(const std::string& path, int flags, int mode) {
  int fd;
  do {
    fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno_status(errno, "cannot open", path);
  return File(fd, path);
}

Status File::pread_exact(void* dst, size_t n, uint64_t offset) const {
  auto* p = static_cast<uint8_t*>(dst);
  while (n > 0) {
    ssize_t r = ::pread(fd_, p, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "cannot read", path_);
    }
    if (r == 0)
      return io_error("cannot read '" + path_ + "': unexpected end of file at byte " + std::to_string(offset));
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return Status::ok();
}

Status File::pwrite_all(const void* src, size_t n, uint64_t offset) const {
  const auto* p = static_cast<const uint8_t*>(src);
  while (n > 0) {
    ssize_t r = ::pwrite(fd_, p, n, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "cannot write", path_);
    }
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return Status::ok();
}

Status File::pwritev_all(std::vector<struct iovec>& iov, uint64_t offset) const {
  size_t first = 0;
  while (first < iov.size()) {
    const int count = static_cast<int>(std::min<size_t>(iov.size() - first, IOV_MAX));
    ssize_t r = ::pwritev(fd_, &iov[first], count, static_cast<off_t>(offset));
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "cannot write", path_);
    }
    offset += static_cast<uint64_t>(r);
    // Skip fully written buffers; trim a partially written one.
    size_t done = static_cast<size_t>(r);
    while (first < iov.size() && done >= iov[first].iov_len) done -= iov[first++].iov_len;
    if (done > 0) {
      iov[first].iov_base = static_cast<uint8_t*>(iov[first].iov_base) + done;
      iov[first].iov_len -= done;
    }
  }
  return Status::ok();
}

Status File::write_all(const void* src, size_t n) const {
  const auto* p = static_cast<const uint8_t*>(src);
  while (n > 0) {
    ssize_t r = ::write(fd_, p, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      return errno_status(errno, "cannot write", path_);
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::ok();
}

Result<uint64_t> File::size() const {
  struct stat st;
  if (::fstat(fd_, &st) != 0) return errno_status(errno, "cannot stat", path_);
  return static_cast<uint64_t>(st.st_size);
}

Status File::truncate(uint64_t length) const {
  int r;
  do {
    r = ::ftruncate(fd_, static_cast<off_t>(length));
  } while (r != 0 && errno == EINTR);
  if (r != 0) return errno_status(errno, "cannot truncate", path_);
  return Status::ok();
}

Status File::sync() const {
  // EINTR means fsync was interrupted before it could report on writeback: ask again.
  if (retry_eintr([&] { return ::fsync(fd_); }) != 0) return errno_status(errno, "cannot sync", path_);
  return Status::ok();
}

Status File::start_writeback(uint64_t offset, uint64_t n) const {
  if (n == 0) return Status::ok();
  if (retry_eintr([&] {
        return ::sync_file_range(fd_, static_cast<off64_t>(offset), static_cast<off64_t>(n), SYNC_FILE_RANGE_WRITE);
      }) != 0)
    return errno_status(errno, "cannot write back", path_);
  return Status::ok();
}

void File::close() {
  // Never retried: Linux releases the descriptor even when close(2) says EINTR, and a
  // retry could close a descriptor another thread just opened. Written files are
  // fsynced before they matter, so close's own report adds nothing.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Status sync_directory(const std::string& dir) {
  auto f = File::open(dir, O_RDONLY | O_DIRECTORY);
  if (!f.is_ok()) return f.status();
  return f->sync();
}

namespace {
template <class Call>
auto retry_with_template(std::string& tmpl, Call&& call) {
  const std::string ending = "XXXXXX";
  const size_t at = tmpl.size() >= ending.size() ? tmpl.size() - ending.size() : 0;
  return retry_eintr([&] {
    tmpl.replace(at, ending.size(), ending);
    return call();
  });
}
}  // namespace

bool make_temp_dir(std::string& tmpl) {
  return retry_with_template(tmpl, [&] { return ::mkdtemp(tmpl.data()) == nullptr ? -1 : 0; }) == 0;
}

int make_temp_file(std::string& tmpl) {
  return retry_with_template(tmpl, [&] { return ::mkstemp(tmpl.data()); });
}

}  // namespace zrec::io
