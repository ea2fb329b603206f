// Hints about how large buffers are used, for the kernel. Header-only, so the core
// uses it too (its transfer and join buffers) without linking the support library.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

namespace zrec {

// Asks for the 2 MiB-aligned interior of [data, data + bytes) to be backed by
// transparent huge pages. Where THP is in "madvise" mode (Debian's default) nothing
// else gets them, and a buffer of many MiB is faulted in 4 KiB at a time when first
// written: 16,384 faults per 64 MiB, each microseconds on a VM. A hint: failures and
// kernels without THP are ignored, and nothing changes but speed.
inline void advise_huge_pages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const auto begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) (void)::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace zrec
