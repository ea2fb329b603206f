// Hints about how large buffers are used, for the kernel.
#pragma once

#include <cstddef>

namespace zrec {

// Asks for the 2 MiB-aligned interior of [data, data + bytes) to be backed by
// transparent huge pages. Where THP is in "madvise" mode (Debian's default) nothing
// else gets them, and a buffer of many MiB is faulted in 4 KiB at a time when first
// written: 16,384 faults per 64 MiB, each microseconds on a VM. A hint: failures and
// kernels without THP are ignored, and nothing changes but speed.
void advise_huge_pages(void* data, size_t bytes);

}  // namespace zrec
