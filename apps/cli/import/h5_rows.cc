// H5Rows: see h5_rows.h.
#include "cli/import/h5_rows.h"

#include <algorithm>

#include "zrec/format.h"

namespace zrec::cli {

namespace {

// Rows per read at most: each costs a RecordRef besides its bytes (as RecordWindow).
constexpr uint64_t kMaxRowsPerRead = RecordWindow::kMaxRecords;

// The end of the window that starts at row `pos`: `rows` rows on, or, when windows
// hold whole chunks, the chunk boundary that many rows on (so windows stay aligned).
uint64_t window_end(uint64_t pos, uint64_t rows, uint64_t chunk_rows, uint64_t stop) {
  if (chunk_rows > 0 && rows >= chunk_rows) return std::min(stop, pos / chunk_rows * chunk_rows + rows);
  return std::min(stop, pos + rows);
}

// Rows per window rounded down to whole chunks, when it holds at least one.
uint64_t whole_chunks(uint64_t rows, uint64_t chunk_rows) {
  rows = std::clamp<uint64_t>(rows, 1, kMaxRowsPerRead);
  return chunk_rows > 0 && rows >= chunk_rows ? rows / chunk_rows * chunk_rows : rows;
}

}  // namespace

H5Rows::H5Rows(H5Dataset& ds, uint64_t start, uint64_t stop, uint64_t window_bytes)
    : ds_(ds), pos_(start), stop_(stop), budget_(window_bytes) {}

Result<std::unique_ptr<H5Rows>> H5Rows::open(H5Dataset& ds, uint64_t start, uint64_t stop, uint64_t window_bytes) {
  // A band of chunks is decompressed whole and, when a window holds fewer rows, cached:
  // it must fit the window, or a small file of highly compressed chunks would cost
  // gigabytes.
  if (ds.band_bytes() > window_bytes)
    return invalid_argument(ds.where() + " is stored in chunks of " + std::to_string(ds.chunk_rows()) +
                            " rows, and the chunks of those rows (all other axes) are " +
                            std::to_string(ds.band_bytes()) + " bytes decompressed, more than the window (" +
                            std::to_string(window_bytes) + " bytes): give --window-mib " +
                            std::to_string((ds.band_bytes() + (uint64_t{1} << 20) - 1) >> 20) + " or more");
  std::unique_ptr<H5Rows> r(new H5Rows(ds, start, stop, window_bytes));
  if (ds.schema().is_dense()) {
    r->rows_ = whole_chunks(window_bytes / ds.row_bytes(), ds.chunk_rows());
    if (ds.chunk_rows() > r->rows_) ZREC_RETURN_IF_ERROR(ds.use_chunk_cache(ds.band_bytes()));
  } else {
    // Until the first window tells the rows' mean size: one chunk, or 1024 rows.
    r->rows_ = whole_chunks(ds.chunk_rows() > 0 ? ds.chunk_rows() : 1024, ds.chunk_rows());
  }
  return r;
}

Result<uint64_t> H5Rows::ready() {
  if (next_ == refs_.size()) {
    if (!bad_.empty()) return invalid_argument(bad_);
    if (pos_ >= stop_) return uint64_t{0};
    const uint64_t end = window_end(pos_, rows_, ds_.chunk_rows(), stop_);
    ZREC_RETURN_IF_ERROR(ds_.schema().is_dense() ? read_dense(end) : read_vlen(end));
    pos_ = end;
    next_ = 0;
    if (refs_.empty()) return invalid_argument(bad_);
  }
  return refs_.size() - next_;
}

std::span<const RecordRef> H5Rows::take(uint64_t n) {
  const std::span<const RecordRef> out = std::span<const RecordRef>(refs_).subspan(next_, n);
  for (const RecordRef& r : out) bytes_taken_ += r.size;
  next_ += n;
  return out;
}

Status H5Rows::read_dense(uint64_t end) {
  const uint64_t n = end - pos_, row_bytes = ds_.row_bytes();
  if (buffer_.empty()) buffer_.resize(std::min(rows_, stop_ - pos_) * row_bytes);
  ZREC_RETURN_IF_ERROR(ds_.read_dense(pos_, n, buffer_.data()));
  refs_.resize(n);
  for (uint64_t i = 0; i < n; ++i) refs_[i] = RecordRef{buffer_.data() + i * row_bytes, row_bytes, nullptr};
  return Status::ok();
}

Status H5Rows::read_vlen(uint64_t end) {
  const uint64_t n = end - pos_, itemsize = ds_.schema().dtype.itemsize;
  ZREC_RETURN_IF_ERROR(ds_.read_vlen(pos_, n, block_));
  refs_.resize(n);
  dims_.resize(n);
  uint64_t bytes = 0, good = 0;
  for (; good < n; ++good) {
    const uint64_t len = block_.length(good);
    const std::string row = "row " + std::to_string(pos_ + good) + " of " + ds_.where();
    if (len == 0) bad_ = row + " is an empty sequence (records are nonempty)";
    if (len > kMaxRagged1dPayloadBytes / itemsize)
      bad_ = row + " holds " + std::to_string(len) + " values; a record holds at most " +
             std::to_string(kMaxRagged1dPayloadBytes) + " bytes";
    if (!bad_.empty()) break;
    dims_[good] = len;
    refs_[good] = RecordRef{block_.data(good), len * itemsize, &dims_[good]};
    bytes += len * itemsize;
  }
  refs_.resize(good);
  // The next window: as many rows as the budget holds at this window's mean row size.
  rows_ = whole_chunks(std::max<uint64_t>(1, budget_ / std::max<uint64_t>(1, bytes / n)), ds_.chunk_rows());
  return Status::ok();
}

}  // namespace zrec::cli
