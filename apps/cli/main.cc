// zrec: build, inspect, check and measure zrecord stores. All logic is in run_cli().
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <exception>
#include <initializer_list>

#include "cli/app/app.h"
#include "cli/commands.h"
#include "cli/report/console.h"

namespace {

// A descriptor 0-2 that the caller left closed (`2>&-`, `<&-`) would be the next one
// open(2) returns: meta.zr would become "stderr" and receive warnings and progress lines,
// or "stdin" and be appended as a record. Each closed one is reopened on /dev/null before
// anything else is opened; when even that fails, zrec refuses to run. A closed stdout is
// noted: a command whose output goes there fails rather than write into /dev/null.
bool reopen_closed_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == STDOUT_FILENO) zrec::cli::note_stdout_closed_at_start();
    const int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got == fd) continue;
    if (got >= 0) ::close(got);
    return false;  // stderr itself may be closed: nothing to tell
  }
  return true;
}

// SIGINT and SIGTERM stop every command the same way, however zrec was started. A shell
// without job control starts `zrec ... &` with SIGINT ignored (POSIX), and any parent may
// pass either one ignored or blocked. Kept, that would make the commands without
// handlers of their own (cat, info, verify, ...) deaf to it while append-* and
// recompress still stop. So both go back to their default action here, unblocked:
// commands that must clean up install handlers (cli/interrupt.h) and exit 130/143; the
// others end by the signal itself, which a shell reports as the same 130/143. SIGHUP,
// which nohup ignores, is left as inherited.
void reset_inherited_interrupt_dispositions() {
  sigset_t set;
  sigemptyset(&set);
  for (const int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) std::signal(sig, SIG_DFL);
    sigaddset(&set, sig);
  }
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (!reopen_closed_standard_fds()) return 1;
  reset_inherited_interrupt_dispositions();
  // Past a file size limit (ulimit -f), write(2) fails with EFBIG and zrec reports it and
  // leaves the store as published, instead of dying of SIGXFSZ mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return zrec::cli::run_cli(argc, argv, zrec::cli::all_commands());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zrec: internal error: %s\n", e.what());
    return 1;
  }
}
