// Windowed record collection for appends.
#include "cli/import/record_window.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "zrec_support/memory.h"

namespace zrec::cli {

RecordWindow::RecordWindow(StoreWriter& writer, uint64_t budget_bytes)
    : writer_(writer),
      budget_(std::max<uint64_t>(1, small_windows(writer) ? std::min(budget_bytes, kSmallWindowBytes) : budget_bytes)),
      keep_(std::max(budget_, budget_bytes)),
      ndim_(writer.schema().ndim),
      ragged_(!writer.schema().is_dense()),
      max_records_(small_windows(writer) ? kSmallWindowRecords : kMaxRecords) {}

bool RecordWindow::small_windows(const StoreWriter& writer) {
  return writer.codec() == Codec::kRaw || writer.lanes()->count() == 1;
}

Result<uint64_t> RecordWindow::reserve(uint64_t count, uint64_t bytes_each) {
  assert(pending_ == 0);  // the two ways of filling a window are not mixed
  if (count == 0) return uint64_t{0};
  uint64_t room_records = max_records_ - sizes_.size();
  uint64_t room_bytes = used_ <= budget_ ? budget_ - used_ : 0;
  if (room_records == 0 || room_bytes < bytes_each) {
    if (!sizes_.empty()) ZREC_RETURN_IF_ERROR(flush());
    room_records = max_records_;
    room_bytes = budget_;
  }
  // A record larger than the whole budget goes alone in its own window.
  const uint64_t fit = bytes_each == 0 ? room_records : std::max<uint64_t>(1, room_bytes / bytes_each);
  const uint64_t n = std::min({count, room_records, fit});
  const uint64_t need = used_ + n * bytes_each;
  if (bytes_.size() < need) {
    if (need <= budget_) reserve_budget();
    bytes_.resize(need);
  }
  return n;
}

void RecordWindow::reserve_budget() {
  // A budget of many GiB (--window-mib allows 1 TiB) grows as it is used instead.
  constexpr uint64_t kMaxReserve = uint64_t{1} << 30;
  if (bytes_.capacity() >= budget_ || budget_ > kMaxReserve) return;
  bytes_.reserve(budget_);
  advise_huge_pages(bytes_.data(), budget_);
}

void RecordWindow::add(uint64_t bytes, const uint64_t* dims) {
  offsets_.push_back(used_);
  sizes_.push_back(bytes);
  if (ragged_) dims_.insert(dims_.end(), dims, dims + ndim_);
  used_ += bytes;
  window_payload_ += bytes;
}

Result<std::span<uint8_t>> RecordWindow::input_space(uint64_t min_bytes) {
  min_bytes = std::max<uint64_t>(min_bytes, 1);
  // Performance note: flush only when the budget is used up, and not for the pending
  // bytes alone (a record larger than the budget grows the window instead).
  if (used_ + pending_ + min_bytes > budget_ && used_ > 0) ZREC_RETURN_IF_ERROR(flush());
  const uint64_t need = used_ + pending_ + min_bytes;
  if (bytes_.size() < need) {
    if (need <= budget_) reserve_budget();
    // Grow geometrically (a long record costs amortized O(1) per byte), up to the
    // budget while the window holds ordinary records, past it only for a longer one.
    const uint64_t doubled = std::max<uint64_t>(bytes_.size() * 2, uint64_t{1} << 20);
    bytes_.resize(std::max(need, need <= budget_ ? std::min(budget_, doubled) : doubled));
  }
  return std::span<uint8_t>(bytes_.data() + used_ + pending_, bytes_.size() - used_ - pending_);
}

Status RecordWindow::flush() {
  Status s;
  if (!sizes_.empty()) {
    refs_.resize(sizes_.size());
    for (size_t k = 0; k < sizes_.size(); ++k)
      refs_[k] = RecordRef{bytes_.data() + offsets_[k], sizes_[k], ragged_ ? &dims_[k * ndim_] : nullptr};
    s = expansion_ ? expansion_->append(writer_, refs_) : writer_.append(refs_);
    appended_records_ += sizes_.size();
    appended_bytes_ += window_payload_;
  }
  if (pending_ > 0 && used_ > 0) std::memmove(bytes_.data(), bytes_.data() + used_, pending_);
  used_ = 0;
  window_payload_ = 0;
  offsets_.clear();
  sizes_.clear();
  dims_.clear();
  // A window that grew past the caller's budget for one oversized record gives the
  // memory back (a raw window keeps what it grew to within the budget, so members
  // larger than kSmallWindowBytes do not fault in fresh memory each).
  if (bytes_.size() > keep_ && pending_ <= budget_) {
    decltype(bytes_) smaller(bytes_.begin(), bytes_.begin() + static_cast<ptrdiff_t>(pending_));
    bytes_.swap(smaller);
  }
  return s;
}

}  // namespace zrec::cli
