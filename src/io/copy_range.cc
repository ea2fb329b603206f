// copy_range(): copy_file_range(2) with a pread/pwrite fallback (see copy_range.h).
#include "io/copy_range.h"

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
                  uint64_t n) {
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
  }
  if (n == 0) return Status::ok();
  return copy_through_buffer(in_fd, in_name, in_offset, out, out_offset, n);
}

}  // namespace zrec::io
