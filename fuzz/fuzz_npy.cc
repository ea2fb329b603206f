// libFuzzer target: .npy headers, as append-npy reads them from a stream of arrays,
// and the header dict parser alone. A header that parses must encode back to a header
// that parses to the same dtype and shape.
#include <unistd.h>

#include <string>
#include <vector>

#include "cli/formats/npy.h"
#include "fuzz_util.h"
#include "zrec_support/input_stream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zrec;
  (void)cli::parse_npy_header_dict(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz");

  const int fd = fuzz::memory_fd(data, size);
  {
    io::InputStream in(fd, "fuzz", {}, 4096);
    std::vector<uint8_t> skip(4096);
    for (int arrays = 0; arrays < 64; ++arrays) {
      auto header = cli::read_npy_header(in);
      if (!header.is_ok() || !header.value()) break;
      const cli::NpyHeader& h = *header.value();
      // Round trip: what we would write for this array reads back the same.
      const std::string bytes = cli::encode_npy_header(h.dtype, h.shape);
      const int fd2 = fuzz::memory_fd(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      io::InputStream again(fd2, "again");
      auto back = cli::read_npy_header(again);
      if (!back.is_ok() || !back.value() || back.value()->dtype != h.dtype || back.value()->shape != h.shape)
        __builtin_trap();
      close(fd2);
      // Skip the data as append-npy would, in bounded steps; the input ends it.
      uint64_t left = h.data_bytes;
      while (left > 0) {
        auto got = in.read_full(skip.data(), std::min<uint64_t>(left, skip.size()));
        if (!got.is_ok() || got.value() == 0) break;
        left -= got.value();
      }
      if (left > 0) break;
    }
  }
  close(fd);
  return 0;
}
