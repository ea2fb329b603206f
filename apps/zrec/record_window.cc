// Windowed record collection for appends.
#include "zrec/record_window.h"

#include <algorithm>

namespace zrec::cli {

RecordWindow::RecordWindow(StoreWriter& writer, uint64_t budget_bytes)
    : writer_(writer),
      budget_(std::max<uint64_t>(1, budget_bytes)),
      ndim_(writer.schema().ndim),
      ragged_(!writer.schema().is_dense()) {}

Result<uint64_t> RecordWindow::reserve(uint64_t count, uint64_t bytes_each) {
  if (count == 0) return uint64_t{0};
  uint64_t room_records = kMaxRecords - sizes_.size();
  uint64_t room_bytes = used_ <= budget_ ? budget_ - used_ : 0;
  if (room_records == 0 || room_bytes < bytes_each) {
    if (!sizes_.empty()) ZREC_RETURN_IF_ERROR(flush());
    room_records = kMaxRecords;
    room_bytes = budget_;
  }
  // A record larger than the whole budget goes alone in its own window.
  const uint64_t fit = bytes_each == 0 ? room_records : std::max<uint64_t>(1, room_bytes / bytes_each);
  const uint64_t n = std::min({count, room_records, fit});
  const uint64_t need = used_ + n * bytes_each;
  if (bytes_.size() < need) bytes_.resize(need);
  return n;
}

void RecordWindow::add(uint64_t bytes, const uint64_t* dims) {
  offsets_.push_back(used_);
  sizes_.push_back(bytes);
  if (ragged_) dims_.insert(dims_.end(), dims, dims + ndim_);
  used_ += bytes;
}

Status RecordWindow::flush() {
  if (sizes_.empty()) return Status::ok();
  refs_.resize(sizes_.size());
  for (size_t k = 0; k < sizes_.size(); ++k)
    refs_[k] = RecordRef{bytes_.data() + offsets_[k], sizes_[k], ragged_ ? &dims_[k * ndim_] : nullptr};
  Status s = writer_.append(refs_);
  appended_records_ += sizes_.size();
  appended_bytes_ += used_;
  used_ = 0;
  offsets_.clear();
  sizes_.clear();
  dims_.clear();
  // A window that grew for one oversized record gives the memory back.
  if (bytes_.size() > budget_) std::vector<uint8_t>().swap(bytes_);
  return s;
}

}  // namespace zrec::cli
