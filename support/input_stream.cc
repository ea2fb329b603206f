// Buffered sequential reads from a file, a pipe or stdin (see zrec_support/input_stream.h).
// Reads never seek, so the same code serves `append-npy -` on a pipe and on a file.
#include "zrec_support/input_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "zrec_support/file.h"  // errno_status

namespace zrec::io {
namespace {

bool wake_fd_ready(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

bool is_cancelled(const CancelToken& cancel) {
  if (cancel.flag != nullptr && cancel.flag->load(std::memory_order_relaxed) != 0) return true;
  return cancel.wake_fd >= 0 && wake_fd_ready(cancel.wake_fd);
}

// read(2) with EINTR retried, unless cancelled: then -1 with errno ECANCELED. With a
// wake_fd, waits for input in poll(2) on both descriptors first (a regular file is
// always ready, so this costs one syscall per buffer-sized read). A descriptor
// someone left non-blocking (a shell can hand us such a stdin) reports EAGAIN; wait
// for input rather than failing.
ssize_t read_retry(int fd, void* dst, size_t n, const CancelToken& cancel) {
  for (;;) {
    if (is_cancelled(cancel)) {
      errno = ECANCELED;
      return -1;
    }
    if (cancel.wake_fd >= 0) {
      pollfd p[2] = {{fd, POLLIN, 0}, {cancel.wake_fd, POLLIN, 0}};
      if (::poll(p, 2, -1) < 0) {
        if (errno == EINTR) continue;
        return -1;
      }
      if (p[1].revents & POLLIN) continue;  // the check above reports it
      // fd is readable, at EOF or in error: read(2) says which.
    }
    ssize_t got = ::read(fd, dst, n);
    if (got >= 0) return got;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, -1) < 0 && errno != EINTR) return -1;
      continue;
    }
    return -1;
  }
}

Status read_error(int err, const std::string& name) {
  if (err == ECANCELED) return Status(StatusCode::kCancelled, "interrupted while reading '" + name + "'");
  return errno_status(err, "cannot read", name);
}

}  // namespace

InputStream::InputStream(int fd, std::string name, Control control, size_t buffer_bytes)
    : fd_(fd), name_(std::move(name)), buffer_(std::max<size_t>(buffer_bytes, 1)), control_(std::move(control)) {}

Result<InputStream> InputStream::open(const std::string& path, Control control) {
  if (path == "-") return InputStream(STDIN_FILENO, "-", std::move(control));
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno_status(errno, "cannot open", path);
  // open(2) succeeds on a directory and only read(2) fails; say so up front.
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    return errno_status(EISDIR, "cannot open", path);
  }
  InputStream stream(fd, path, std::move(control));
  stream.owns_fd_ = true;
  return stream;
}

InputStream::InputStream(InputStream&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      owns_fd_(std::exchange(other.owns_fd_, false)),
      name_(std::move(other.name_)),
      buffer_(std::move(other.buffer_)),
      begin_(std::exchange(other.begin_, 0)),
      end_(std::exchange(other.end_, 0)),
      eof_(std::exchange(other.eof_, true)),
      position_(other.position_),
      control_(std::move(other.control_)) {}

InputStream& InputStream::operator=(InputStream&& other) noexcept {
  if (this != &other) {
    if (owns_fd_ && fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    owns_fd_ = std::exchange(other.owns_fd_, false);
    name_ = std::move(other.name_);
    buffer_ = std::move(other.buffer_);
    begin_ = std::exchange(other.begin_, 0);
    end_ = std::exchange(other.end_, 0);
    eof_ = std::exchange(other.eof_, true);
    position_ = other.position_;
    control_ = std::move(other.control_);
  }
  return *this;
}

InputStream::~InputStream() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
}

Status InputStream::fill() {
  begin_ = end_ = 0;
  if (eof_) return Status::ok();
  ssize_t got = read_retry(fd_, buffer_.data(), buffer_.size(), control_.cancel);
  if (got < 0) return read_error(errno, name_);
  if (got == 0) eof_ = true;
  end_ = static_cast<size_t>(got);
  return Status::ok();
}

Result<size_t> InputStream::read_some(void* dst, size_t n) {
  if (n == 0) return size_t{0};
  if (begin_ == end_) {
    if (eof_) return size_t{0};
    // Performance note: a read at least as large as the buffer skips the copy.
    if (n >= buffer_.size()) {
      ssize_t got = read_retry(fd_, dst, n, control_.cancel);
      if (got < 0) return read_error(errno, name_);
      if (got == 0) eof_ = true;
      position_ += static_cast<uint64_t>(got);
      return static_cast<size_t>(got);
    }
    ZREC_RETURN_IF_ERROR(fill());
    if (begin_ == end_) return size_t{0};
  }
  size_t take = std::min(n, end_ - begin_);
  std::memcpy(dst, buffer_.data() + begin_, take);
  begin_ += take;
  position_ += take;
  return take;
}

Result<size_t> InputStream::read_full(void* dst, size_t n) {
  auto* out = static_cast<uint8_t*>(dst);
  size_t done = 0;
  while (done < n) {
    ZREC_ASSIGN_OR_RETURN(size_t got, read_some(out + done, n - done));
    if (got == 0) break;
    done += got;
  }
  return done;
}

bool InputStream::seeks() const {
  struct stat st;
  return ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
}

Result<uint64_t> InputStream::skip(uint64_t n) {
  uint64_t done = std::min<uint64_t>(n, end_ - begin_);
  begin_ += done;
  position_ += done;
  struct stat st;
  if (done < n && !eof_ && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode)) {
    const off_t at = ::lseek(fd_, 0, SEEK_CUR);
    if (at >= 0) {
      const uint64_t left = st.st_size > at ? static_cast<uint64_t>(st.st_size - at) : 0;
      const uint64_t step = std::min(n - done, left);
      if (::lseek(fd_, at + static_cast<off_t>(step), SEEK_SET) >= 0) {
        done += step;
        position_ += step;
      }
    }
  }
  // A pipe (or a file that grew): read and drop.
  while (done < n) {
    if (begin_ == end_) {
      ZREC_RETURN_IF_ERROR(fill());
      if (begin_ == end_) break;
    }
    const uint64_t take = std::min<uint64_t>(n - done, end_ - begin_);
    begin_ += take;
    position_ += take;
    done += take;
  }
  return done;
}

Result<bool> InputStream::at_eof() {
  if (begin_ != end_) return false;
  ZREC_RETURN_IF_ERROR(fill());
  return begin_ == end_;
}

}  // namespace zrec::io
