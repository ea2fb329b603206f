// Side files, opened without blocking and refused unless regular (see side_file.h).
#include "cli/os/side_file.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>

namespace zrec::cli {

namespace {

const char* file_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "no regular file";
}

}  // namespace

Status not_a_regular_side_file(const std::string& path, const std::string& option, mode_t mode) {
  return invalid_argument(option + " '" + path + "' is " + file_kind(mode) + ", not a regular file");
}

namespace {

// An anonymous pipe (pipefs), as bash's <(cmd) names one (/dev/fd/63): its writer is
// the command, so reading it waits for that command as reading stdin would.
bool is_anonymous_pipe(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == PIPEFS_MAGIC;
}

// open_side_file, and with `pipes` an anonymous pipe is accepted too.
Result<io::File> open_checked(const std::string& path, const std::string& option, int flags, bool pipes) {
  ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, flags | O_NONBLOCK | O_NOCTTY, 0644));
  struct stat st {};
  if (::fstat(f.fd(), &st) != 0) return io::errno_status(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode) && !(pipes && S_ISFIFO(st.st_mode) && is_anonymous_pipe(f.fd())))
    return not_a_regular_side_file(path, option, st.st_mode);
  const int fl = ::fcntl(f.fd(), F_GETFL);
  if (fl < 0 || ::fcntl(f.fd(), F_SETFL, fl & ~O_NONBLOCK) != 0) return io::errno_status(errno, "cannot open", path);
  return f;
}

}  // namespace

Result<io::File> open_side_file(const std::string& path, const std::string& option, int flags) {
  return open_checked(path, option, flags, false);
}

Result<std::vector<uint8_t>> read_side_file(const std::string& path, const std::string& option, uint64_t max_bytes) {
  ZREC_ASSIGN_OR_RETURN(io::File f, open_side_file(path, option));
  ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
  if (size > max_bytes)
    return invalid_argument(option + " '" + path + "' is larger than " + std::to_string(max_bytes) + " bytes");
  std::vector<uint8_t> bytes(size);
  ZREC_RETURN_IF_ERROR(f.pread_exact(bytes.data(), bytes.size(), 0));
  return bytes;
}

Status check_side_file(const std::string& path, const std::string& option, bool pipes) {
  struct stat st {};
  if (path == "-" || ::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return Status::ok();
  if (pipes && S_ISFIFO(st.st_mode)) {
    // Only an open descriptor tells an anonymous pipe from a FIFO; O_NONBLOCK keeps the
    // open of a FIFO from waiting for a writer.
    const int fd = io::retry_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC); });
    const bool anonymous = fd >= 0 && is_anonymous_pipe(fd);
    if (fd >= 0) ::close(fd);
    if (anonymous) return Status::ok();
  }
  return not_a_regular_side_file(path, option, st.st_mode);
}

Result<SideInput> SideInput::open(const std::string& path, const std::string& option, Control control) {
  if (path == "-") return SideInput(io::File(), io::InputStream(STDIN_FILENO, "-", std::move(control)));
  ZREC_ASSIGN_OR_RETURN(io::File f, open_checked(path, option, O_RDONLY, true));
  const int fd = f.fd();
  return SideInput(std::move(f), io::InputStream(fd, path, std::move(control)));
}

}  // namespace zrec::cli
