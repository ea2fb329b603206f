// The rows of an HDF5 dataset as records, a window at a time: for append-h5 into a
// store, and into every stream of a root at once (one dataset per stream, read in step).
//
// Rows are read in windows of about a byte budget, cut at the dataset's chunk
// boundaries so each chunk is read and decompressed once; when one band of chunks
// (chunk rows x all other axes) is larger than a window, HDF5's chunk cache holds that
// band while windows of fewer rows read it. Dense rows are read straight into one
// buffer of the window's size; variable-length rows stay in the memory HDF5 reads them
// into, the number of rows per window following their mean size.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zrec/status.h"
#include "zrec/store_writer.h"

#include "cli/import/h5_dataset.h"
#include "cli/import/record_window.h"

namespace zrec::cli {

class H5Rows {
 public:
  // Rows [start, stop) of `ds` (which must outlive this), in windows of about
  // `window_bytes`. Refuses a dataset whose band of chunks, decompressed, is larger than
  // the window, naming the --window-mib that fits: a few KiB of gzip can hold a 1 GiB
  // chunk, and a band is decompressed whole.
  static Result<std::unique_ptr<H5Rows>> open(H5Dataset& ds, uint64_t start, uint64_t stop, uint64_t window_bytes);

  // Passes over the next n rows unread (before the first ready()).
  void skip(uint64_t n) { pos_ = std::min(stop_, pos_ + n); }
  // Records left in the window in hand, reading the next window when it is used up; 0
  // past the last row. A variable-length row that cannot be a record (empty, or longer
  // than a record may be) ends its window: the rows before it are handed out first, so
  // checkpoints among them publish as they would have without it, and the call after
  // them fails naming the row.
  Result<uint64_t> ready();
  // The next n <= ready() records, valid until ready() reads the next window.
  std::span<const RecordRef> take(uint64_t n);
  // Bytes of the records taken so far, for a command's summary.
  uint64_t bytes_taken() const { return bytes_taken_; }

 private:
  H5Rows(H5Dataset& ds, uint64_t start, uint64_t stop, uint64_t window_bytes);
  Status read_dense(uint64_t end);
  Status read_vlen(uint64_t end);

  H5Dataset& ds_;
  uint64_t pos_, stop_;
  const uint64_t budget_;
  uint64_t rows_ = 0;                                             // rows per window
  std::vector<uint8_t, UninitializedAllocator<uint8_t>> buffer_;  // Dense: the window's rows
  H5VlenRows block_;                                              // variable-length: the window's rows
  std::vector<uint64_t> dims_;
  std::vector<RecordRef> refs_;  // the window's records
  size_t next_ = 0;              // the first record of refs_ not taken
  std::string bad_;              // what is wrong with the row that ended the window
  uint64_t bytes_taken_ = 0;
};

}  // namespace zrec::cli
