// Helpers shared by the libFuzzer targets: a private scratch directory and an
// in-memory file descriptor for stream parsers.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>

namespace zrec::fuzz {

// A directory of this process, made once (under $TMPDIR, /dev/shm when it exists so
// the per-input files stay in memory), removed at exit by the OS's tmp cleaning only:
// each input overwrites the files of the previous one.
inline const std::string& scratch_dir() {
  static const std::string dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    std::string tmpl = base + "/zrec-fuzz-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) abort();
    return tmpl;
  }();
  return dir;
}

// A memfd holding `data`, positioned at 0 (the caller closes it).
inline int memory_fd(const uint8_t* data, size_t size) {
  int fd = memfd_create("zrec-fuzz", MFD_CLOEXEC);
  if (fd < 0) abort();
  size_t done = 0;
  while (done < size) {
    ssize_t n = write(fd, data + done, size - done);
    if (n <= 0) abort();
    done += static_cast<size_t>(n);
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace zrec::fuzz
