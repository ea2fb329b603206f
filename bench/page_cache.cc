// Dropping a store's files from the page cache, for --cold.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include "bench_internal.h"
#include "zrec_support/file.h"

namespace zrec::bench {

Status evict_directory(const std::string& dir, bool flush) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return io::errno_status(errno, "cannot open directory", dir);
  Status status;
  while (dirent* e = ::readdir(d)) {
    if (e->d_type != DT_REG && e->d_type != DT_UNKNOWN) continue;
    const std::string path = dir + "/" + e->d_name;
    const int fd = io::retry_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); });
    if (fd < 0) continue;  // not a regular file we can read: nothing cached to drop
    if (flush && io::retry_eintr([&] { return ::fdatasync(fd); }) != 0 && status.is_ok())
      status = io::errno_status(errno, "cannot sync", path);
    const int err = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (err != 0 && status.is_ok()) status = io::errno_status(err, "cannot drop the page cache of", path);
    ::close(fd);
  }
  ::closedir(d);
  return status;
}

}  // namespace zrec::bench
