// copy_range(): copy_file_range(2) with a pread/pwrite fallback; clone_range(): a
// reflink of the whole blocks first (see copy_range.h).
#include "io/copy_range.h"

#include <linux/fs.h>  // FICLONERANGE
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>

namespace zrec::io {
namespace {

// Cleared the first time the kernel refuses copy_file_range for a reason that will not
// change (old kernel, file systems that cannot), so later copies go straight to the
// fallback instead of failing a system call each.
std::atomic<bool> g_kernel_copy{true};
// The same for FICLONERANGE (ext4, tmpfs and most network file systems have no reflinks).
std::atomic<bool> g_clone{true};

constexpr size_t kFallbackBuffer = size_t{1} << 20;

Status copy_through_buffer(int in_fd, const std::string& in_name, uint64_t in_offset, const File& out,
                           uint64_t out_offset, uint64_t n) {
  auto buffer = std::make_unique_for_overwrite<uint8_t[]>(std::min<uint64_t>(n, kFallbackBuffer));
  while (n > 0) {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, kFallbackBuffer));
    ssize_t got = ::pread(in_fd, buffer.get(), want, static_cast<off_t>(in_offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return errno_status(errno, "cannot read", in_name);
    if (got == 0) return io_error("'" + in_name + "' ends before offset " + std::to_string(in_offset + n));
    ZREC_RETURN_IF_ERROR(out.pwrite_all(buffer.get(), static_cast<size_t>(got), out_offset));
    in_offset += static_cast<uint64_t>(got);
    out_offset += static_cast<uint64_t>(got);
    n -= static_cast<uint64_t>(got);
  }
  return Status::ok();
}

}  // namespace

Status copy_range(int in_fd, const std::string& in_name, uint64_t in_offset, const File& out, uint64_t out_offset,
                  uint64_t n, CopyCounts* counts) {
  while (n > 0 && g_kernel_copy.load(std::memory_order_relaxed)) {
    auto in_off = static_cast<loff_t>(in_offset), out_off = static_cast<loff_t>(out_offset);
    const ssize_t done = ::copy_file_range(in_fd, &in_off, out.fd(), &out_off, static_cast<size_t>(n), 0);
    if (done < 0) {
      if (errno == EINTR) continue;
      if (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL || errno == EBADF ||
          errno == EPERM || errno == ETXTBSY) {
        g_kernel_copy.store(false, std::memory_order_relaxed);
        break;
      }
      return errno_status(errno, "cannot copy from '" + in_name + "' to", out.path());
    }
    if (done == 0) return io_error("'" + in_name + "' ends before offset " + std::to_string(in_offset + n));
    in_offset += static_cast<uint64_t>(done);
    out_offset += static_cast<uint64_t>(done);
    n -= static_cast<uint64_t>(done);
    if (counts != nullptr) counts->kernel += static_cast<uint64_t>(done);
  }
  if (n == 0) return Status::ok();
  if (counts != nullptr) counts->buffered += n;
  return copy_through_buffer(in_fd, in_name, in_offset, out, out_offset, n);
}

Status clone_range(int in_fd, const std::string& in_name, uint64_t in_offset, const File& out, uint64_t out_offset,
                   uint64_t n, CopyCounts* counts) {
  struct stat st;
  if (g_clone.load(std::memory_order_relaxed) && ::fstat(out.fd(), &st) == 0 && st.st_blksize >= 512 &&
      (st.st_blksize & (st.st_blksize - 1)) == 0) {
    const auto block = static_cast<uint64_t>(st.st_blksize);
    const uint64_t whole = n / block * block;
    // Only whole blocks: a clone ending at the source's end of file would carry its last
    // block's bytes past that end over whatever follows in `out`.
    if (whole > 0 && in_offset % block == 0 && out_offset % block == 0) {
      file_clone_range arg{};
      arg.src_fd = in_fd;
      arg.src_offset = in_offset;
      arg.src_length = whole;
      arg.dest_offset = out_offset;
      if (retry_eintr([&] { return ::ioctl(out.fd(), FICLONERANGE, &arg); }) == 0) {
        if (counts != nullptr) counts->cloned += whole;
        in_offset += whole;
        out_offset += whole;
        n -= whole;
      } else if (errno == EOPNOTSUPP || errno == ENOTTY || errno == ENOSYS || errno == EXDEV || errno == EPERM ||
                 errno == ETXTBSY || errno == EBADF || errno == EISDIR) {
        // No reflinks on this file system (or between these two): never ask again.
        g_clone.store(false, std::memory_order_relaxed);
      } else if (errno != EINVAL) {  // EINVAL: not this range (its blocks); copy it instead
        return errno_status(errno, "cannot clone from '" + in_name + "' to", out.path());
      }
    }
  }
  return copy_range(in_fd, in_name, in_offset, out, out_offset, n, counts);
}

}  // namespace zrec::io
