// libFuzzer target: record selections ("3,10:20,::-7") and index files, against a
// store length taken from the first 8 input bytes. Resolved runs must stay inside the
// store, and, when small, expand to exactly what resolve_selection returns.
#include <unistd.h>

#include <string>

#include "cli/formats/selection.h"
#include "format/endian.h"
#include "fuzz_util.h"
#include "zrec_support/input_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zrec;
  if (size < 8) return 0;
  uint64_t length = format::load_le<uint64_t>(data);
  // Half the time a small store, so that resolution often succeeds and expands.
  if (length & 1) length = (length >> 1) % 1000;
  const std::string_view text(reinterpret_cast<const char*>(data + 8), size - 8);
  auto items = cli::parse_selection(text);
  if (items.is_ok()) {
    auto runs = cli::resolve_runs(items.value(), length);
    if (runs.is_ok()) {
      uint64_t total = 0;
      for (const auto& r : runs.value()) {
        if (r.count > 0 && (r.at(0) >= length || r.at(r.count - 1) >= length)) __builtin_trap();
        total = r.count > UINT64_MAX - total ? UINT64_MAX : total + r.count;  // saturating
      }
      if (total <= 100000) {
        auto ids = cli::resolve_selection(items.value(), length);
        if (!ids.is_ok() || ids.value().size() != total) __builtin_trap();
        size_t k = 0;
        for (const auto& r : runs.value())
          for (uint64_t i = 0; i < r.count; ++i)
            if (ids.value()[k++] != r.at(i)) __builtin_trap();
      }
    }
  }
  if (length <= 100000) {
    const int fd = fuzz::memory_fd(data + 8, size - 8);
    {
      io::InputStream in(fd, "fuzz", {}, 4096);
      auto ids = cli::read_indices(in, length);
      if (ids.is_ok())
        for (uint64_t id : ids.value())
          if (id >= length) __builtin_trap();
    }
    close(fd);
  }
  return 0;
}
