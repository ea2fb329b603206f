// Detects a --wait on a store held by the process at the other end of our stdin/stdout.
#include "cli/os/pipe_deadlock.h"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

namespace zrec::cli {

namespace {

std::string link_of(const std::string& path) {
  char buf[256];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// PIDs holding (not waiting for) a lock on the file (dev, ino), from /proc/locks:
// "1: FLOCK  ADVISORY  READ 4242 08:01:1234 0 EOF"; a waiter's line has "->" after "1:".
std::vector<pid_t> lock_holders(dev_t dev, ino_t ino) {
  std::vector<pid_t> pids;
  std::ifstream locks("/proc/locks");
  for (std::string line; std::getline(locks, line);) {
    std::istringstream fields(line);
    std::string id, kind, advisory, mode, file;
    long pid = 0;
    if (!(fields >> id >> kind) || kind == "->") continue;
    if (!(fields >> advisory >> mode >> pid >> file)) continue;
    unsigned maj = 0, min = 0;
    uintmax_t inode = 0;
    if (std::sscanf(file.c_str(), "%x:%x:%ju", &maj, &min, &inode) != 3) continue;
    if (maj == major(dev) && min == minor(dev) && inode == ino) pids.push_back(static_cast<pid_t>(pid));
  }
  return pids;
}

bool has_pipe(pid_t pid, const std::string& pipe) {
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  while (d != nullptr) {
    const dirent* e = ::readdir(d.get());
    if (e == nullptr) break;
    if (e->d_name[0] != '.' && link_of(dir + "/" + e->d_name) == pipe) return true;
  }
  return false;
}

}  // namespace

std::string pipe_deadlock(int meta_fd, const std::string& store_path) {
  struct stat st;
  if (::fstat(meta_fd, &st) != 0) return {};
  const std::string in = link_of("/proc/self/fd/0"), out = link_of("/proc/self/fd/1");
  const bool in_pipe = in.rfind("pipe:", 0) == 0, out_pipe = out.rfind("pipe:", 0) == 0;
  if (!in_pipe && !out_pipe) return {};
  for (pid_t pid : lock_holders(st.st_dev, st.st_ino)) {
    if (pid == ::getpid()) continue;
    const char* end = in_pipe && has_pipe(pid, in) ? "stdin" : out_pipe && has_pipe(pid, out) ? "stdout" : nullptr;
    if (end == nullptr) continue;
    return "store '" + store_path + "' is held by process " + std::to_string(pid) + ", which is connected to " + end +
           " by a pipe: waiting for it would never end; write that output to a file first";
  }
  return {};
}

}  // namespace zrec::cli
