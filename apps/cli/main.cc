// zrec: build, inspect, check and measure zrecord stores. All logic is in run_cli().
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>

#include "cli/app.h"

namespace {

// A descriptor 0-2 that the caller left closed (`2>&-`, `<&-`) would be the next one
// open(2) returns: meta.zr would become "stderr" and receive warnings and progress lines,
// or "stdin" and be appended as a record. Each closed one is reopened on /dev/null before
// anything else is opened; when even that fails, zrec refuses to run.
bool reopen_closed_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got == fd) continue;
    if (got >= 0) ::close(got);
    return false;  // stderr itself may be closed: nothing to tell
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (!reopen_closed_standard_fds()) return 1;
  // Past a file size limit (ulimit -f), write(2) fails with EFBIG and zrec reports it and
  // leaves the store as published, instead of dying of SIGXFSZ mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return zrec::cli::run_cli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zrec: internal error: %s\n", e.what());
    return 1;
  }
}
