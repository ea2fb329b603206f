// HDF5's gzip (deflate) and bzip2 filters, decoding with a bound (append-h5).
//
// libhdf5's own deflate filter, and the bzip2 plugin, grow their output buffer until the
// compressed stream ends: a chunk of a few hundred bytes that claims a 4 KiB chunk shape
// can inflate to gigabytes (bzip2 packs 45 MB of zeros in 40 bytes), and append-h5's
// window did not bound that (a 402-byte chunk cost 535 MB). The filters installed here
// decode into a buffer of the size the chunk shape declares (H5DecodeScope's limit) and
// fail, saying why, when the stream holds more (or, where the size is exact, less).
//
// deflate is one of libhdf5's predefined filters, which H5Zregister refuses to replace;
// libhdf5's internal H5Z_register (exported by the shared and the static library since
// 1.8) replaces it. bzip2 (filter 307, PyTables' and hdf5plugin's) is registered with
// H5Zregister, so it no longer needs its plugin.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace zrec::cli {

// Installs the bounded filters in this process's libhdf5 (once; later calls do nothing).
void install_bounded_h5_filters();

// Why a bounded filter failed on a chunk.
struct H5DecodeFailure {
  std::string filter;  // "gzip", "bzip2"
  std::string what;    // "decodes to more than 4096 bytes", "is no valid bzip2 stream (...)"
  std::string input;   // the bytes the filter was given (the chunk as stored, but its checksum)
};

// The bound of the chunks decoded while it lives (on this thread): a chunk decodes to at
// most `limit` bytes, and to exactly that many when `exact` (a pipeline of shuffle and
// checksums only, where the filter's output is the chunk itself). Without a scope the
// bounded filters refuse to decode.
class H5DecodeScope {
 public:
  H5DecodeScope(uint64_t limit, bool exact);
  ~H5DecodeScope();
  H5DecodeScope(const H5DecodeScope&) = delete;
  H5DecodeScope& operator=(const H5DecodeScope&) = delete;

  // The first failure of a bounded filter in this scope.
  const std::optional<H5DecodeFailure>& failure() const { return failure_; }

 private:
  friend struct H5BoundedFilters;
  uint64_t limit_;
  bool exact_;
  std::optional<H5DecodeFailure> failure_;
  H5DecodeScope* outer_;
};

}  // namespace zrec::cli
