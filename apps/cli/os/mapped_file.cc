// A read-only mapping that reads as zeros where its file shrank (see mapped_file.h).
#include "cli/os/mapped_file.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>

namespace zrec::cli {

namespace {

// The live mapping's bytes, for the handler: [g_begin, g_end), both 0 when none.
std::atomic<uintptr_t> g_begin{0};
std::atomic<uintptr_t> g_end{0};
std::atomic<bool> g_shrank{false};
std::atomic<uintptr_t> g_page_bytes{4096};
// SIGSEGV is only passed on: SignalHandlers manages two signals.
constinit SignalHandlers g_shrink_handlers{SIGBUS, SIGSEGV};

void on_fault(int sig, siginfo_t* info, void*) {
  const auto at = reinterpret_cast<uintptr_t>(info->si_addr);
  if (sig == SIGBUS && at >= g_begin.load() && at < g_end.load()) {
    // Past the file's new end: a page of zeros in its place, and the access is retried
    // when the handler returns. mmap(2) is a system call and safe here in practice.
    const uintptr_t page = g_page_bytes.load();
    void* zeros = ::mmap(reinterpret_cast<void*>(at & ~(page - 1)), page, PROT_READ,
                         MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (zeros != MAP_FAILED) {
      g_shrank.store(true);
      return;
    }
  }
  // Not ours: put the old disposition back and return, so the access faults again and
  // gets it (the default action, or a sanitizer's report).
  ::sigaction(sig, &g_shrink_handlers.previous(sig), nullptr);
}

struct sigaction fault_action() {
  struct sigaction sa {};
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  return sa;
}

}  // namespace

std::unique_ptr<MappedFile> MappedFile::map(int fd, uint64_t offset) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) <= offset) return nullptr;
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t skip = offset % page;
  const uint64_t bytes = static_cast<uint64_t>(st.st_size) - offset + skip;
  void* mapping = ::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, static_cast<off_t>(offset - skip));
  if (mapping == MAP_FAILED) return nullptr;
  // Read once, front to back: the kernel reads ahead further and drops behind sooner.
  (void)::madvise(mapping, bytes, MADV_SEQUENTIAL);
  g_page_bytes.store(page);
  return std::unique_ptr<MappedFile>(new MappedFile(mapping, bytes, skip));
}

MappedFile::MappedFile(void* mapping, uint64_t mapping_bytes, uint64_t skip)
    : mapping_(mapping),
      mapping_bytes_(mapping_bytes),
      begin_(static_cast<const uint8_t*>(mapping) + skip),
      size_(mapping_bytes - skip),
      released_(static_cast<const uint8_t*>(mapping)),
      scope_(g_shrink_handlers, fault_action()) {
  assert(g_end.load() == 0);  // one at a time
  g_shrank.store(false);
  g_begin.store(reinterpret_cast<uintptr_t>(mapping));
  g_end.store(reinterpret_cast<uintptr_t>(mapping) + mapping_bytes);
}

MappedFile::~MappedFile() {
  g_begin.store(0);
  g_end.store(0);
  ::munmap(mapping_, mapping_bytes_);
}

void MappedFile::release_before(const uint8_t* end) {
  const uintptr_t page = g_page_bytes.load();
  const auto* whole = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(end) & ~(page - 1));
  if (whole <= released_) return;
  (void)::madvise(const_cast<uint8_t*>(released_), static_cast<size_t>(whole - released_), MADV_DONTNEED);
  released_ = whole;
}

void MappedFile::populate(const uint8_t* from, uint64_t bytes) {
  const uintptr_t page = g_page_bytes.load();
  const auto* first = reinterpret_cast<const uint8_t*>(reinterpret_cast<uintptr_t>(from) & ~(page - 1));
  const uint8_t* last = std::min(from + bytes, begin_ + size_);
  if (last <= first) return;
  // Linux 5.14 and later; an older kernel refuses it, and reading faults the pages in.
  (void)::madvise(const_cast<uint8_t*>(first), static_cast<size_t>(last - first), MADV_POPULATE_READ);
}

bool MappedFile::shrank() const { return g_shrank.load(); }

}  // namespace zrec::cli
