// --resume-file (see resume_file.h).
#include "cli/import/resume_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "cli/formats/path_name.h"
#include "cli/os/output_guard.h"
#include "cli/os/side_file.h"
#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

constexpr size_t kMaxResumeFileBytes = 64;

Result<uint64_t> read_length(const std::string& path) {
  ZREC_ASSIGN_OR_RETURN(io::File f, open_side_file(path, "--resume-file"));
  char text[kMaxResumeFileBytes + 1];
  const ssize_t got = io::retry_eintr([&] { return ::read(f.fd(), text, sizeof text); });
  if (got < 0) return io::errno_status(errno, "cannot read", path);
  uint64_t n = 0;
  const char* end = text + got;
  const auto parsed = std::from_chars(text, end, n);
  if (got == 0 || static_cast<size_t>(got) > kMaxResumeFileBytes || parsed.ec != std::errc() || parsed.ptr == text ||
      parsed.ptr + 1 != end || *parsed.ptr != '\n')
    return invalid_argument("resume file '" + path +
                            "' does not hold one length and a newline (zrec writes it on a first run; remove it to "
                            "start over)");
  return n;
}

}  // namespace

Result<uint64_t> resume_from(const std::string& path, uint64_t length, const std::string& store) {
  // Written beside the store, never into it: STORE/dict.zr would become its dictionary.
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(path, "--resume-file", {store}));
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return read_length(path);
  if (errno != ENOENT) return io::errno_status(errno, "cannot read", path);
  const std::string text = std::to_string(length) + "\n";
  std::string tmpl = path + ".tmp-XXXXXX";
  const int fd = io::make_temp_file(tmpl);
  if (fd < 0) return io::errno_status(errno, "cannot create", path);
  io::File temp(fd, tmpl);
  Status s = temp.write_all(text.data(), text.size());
  if (s.is_ok()) s = temp.sync();
  if (s.is_ok() && ::fchmod(temp.fd(), 0644) != 0) s = io::errno_status(errno, "cannot write", tmpl);
  // link(2), not rename(2): a file another run made meanwhile is kept, and read.
  if (s.is_ok() && io::retry_eintr([&] { return ::link(tmpl.c_str(), path.c_str()); }) != 0)
    s = errno == EEXIST ? Status(StatusCode::kAlreadyExists, "") : io::errno_status(errno, "cannot create", path);
  (void)::unlink(tmpl.c_str());
  if (s.code() == StatusCode::kAlreadyExists) return read_length(path);
  ZREC_RETURN_IF_ERROR(s);
  ZREC_RETURN_IF_ERROR(io::sync_directory(parent_directory(path)));
  return length;
}

}  // namespace zrec::cli
