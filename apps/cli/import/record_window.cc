// Windowed record collection for appends, written behind on a thread of its own
// where there are CPUs for it (record_window.h).
#include "cli/import/record_window.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#include "zrec/lanes.h"

#include "zrec_support/memory.h"

namespace zrec::cli {

namespace {

// One buffer's share of the caller's budget: half of it when a second buffer is
// filled while the first is written.
uint64_t buffer_share(uint64_t budget_bytes, bool write_behind) {
  return std::max<uint64_t>(1, write_behind ? budget_bytes / 2 : budget_bytes);
}

}  // namespace

bool RecordWindow::write_behind_by_default() { return available_cpus() > 1; }

RecordWindow::RecordWindow(StoreWriter& writer, uint64_t budget_bytes, bool write_behind)
    : writer_(writer),
      write_behind_(write_behind),
      budget_(small_windows(writer) ? std::min(buffer_share(budget_bytes, write_behind), kSmallWindowBytes)
                                    : buffer_share(budget_bytes, write_behind)),
      keep_(std::max(budget_, buffer_share(budget_bytes, write_behind))),
      ndim_(writer.schema().ndim),
      ragged_(!writer.schema().is_dense()),
      max_records_(small_windows(writer) ? kSmallWindowRecords : kMaxRecords) {}

bool RecordWindow::small_windows(const StoreWriter& writer) {
  return writer.codec() == Codec::kRaw || writer.lanes()->count() == 1;
}

RecordWindow::~RecordWindow() { (void)writing_.wait(); }

Result<uint64_t> RecordWindow::reserve(uint64_t count, uint64_t bytes_each) {
  assert(pending_ == 0);  // the two ways of filling a window are not mixed
  if (count == 0) return uint64_t{0};
  uint64_t room_records = max_records_ - sizes_.size();
  uint64_t room_bytes = used_ <= budget_ ? budget_ - used_ : 0;
  if (room_records == 0 || room_bytes < bytes_each) {
    if (!sizes_.empty()) ZREC_RETURN_IF_ERROR(hand_on());
    room_records = max_records_;
    room_bytes = budget_;
  }
  // A record larger than the whole budget goes alone in its own window.
  const uint64_t fit = bytes_each == 0 ? room_records : std::max<uint64_t>(1, room_bytes / bytes_each);
  const uint64_t n = std::min({count, room_records, fit});
  const uint64_t need = used_ + n * bytes_each;
  ZREC_RETURN_IF_ERROR(grow(need, need));
  return n;
}

void RecordWindow::reserve_budget() {
  // A budget of many GiB (--window-mib allows 1 TiB) grows as it is used instead.
  constexpr uint64_t kMaxReserve = uint64_t{1} << 30;
  if (bytes_.capacity() >= budget_ || budget_ > kMaxReserve) return;
  bytes_.reserve(budget_);
  advise_huge_pages(bytes_.data(), budget_);
}

Status RecordWindow::grow(uint64_t need, uint64_t size) {
  if (bytes_.size() >= need) return Status::ok();
  if (size > keep_ && write_behind_) {
    // An oversized record: no second buffer beside it (the one in flight is written
    // first, then freed), so it costs what it did without writing behind.
    ZREC_RETURN_IF_ERROR(wait());
    spare_bytes_ = Bytes();
  }
  if (need <= budget_) reserve_budget();
  bytes_.resize(size);
  return Status::ok();
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
  // Performance note: hand on only when the budget is used up, and not for the pending
  // bytes alone (a record larger than the budget grows the window instead).
  if (used_ + pending_ + min_bytes > budget_ && used_ > 0) ZREC_RETURN_IF_ERROR(hand_on());
  const uint64_t need = used_ + pending_ + min_bytes;
  if (bytes_.size() < need) {
    // Grow geometrically (a long record costs amortized O(1) per byte), up to the
    // budget while the window holds ordinary records, past it only for a longer one.
    const uint64_t doubled = std::max<uint64_t>(bytes_.size() * 2, uint64_t{1} << 20);
    ZREC_RETURN_IF_ERROR(grow(need, std::max(need, need <= budget_ ? std::min(budget_, doubled) : doubled)));
  }
  return std::span<uint8_t>(bytes_.data() + used_ + pending_, bytes_.size() - used_ - pending_);
}

Status RecordWindow::append_now(std::span<const RecordRef> records) {
  return expansion_ ? expansion_->append(writer_, records) : writer_.append(records);
}

Status RecordWindow::hand_on() {
  Status s;
  if (!sizes_.empty()) {
    // The spare buffer is the batch in flight's until it is written.
    ZREC_RETURN_IF_ERROR(wait());
    refs_.resize(sizes_.size());
    for (size_t k = 0; k < sizes_.size(); ++k)
      refs_[k] = RecordRef{bytes_.data() + offsets_[k], sizes_[k], ragged_ ? &dims_[k * ndim_] : nullptr};
    appended_records_ += sizes_.size();
    appended_bytes_ += window_payload_;
    offsets_.clear();
    sizes_.clear();
    window_payload_ = 0;
    if (write_behind_) {
      const bool oversized = bytes_.size() > keep_;
      std::swap(bytes_, spare_bytes_);
      std::swap(dims_, spare_dims_);
      dims_.clear();
      // The buffer the next records go into: the one written before (a buffer that
      // grew past its share for one oversized record gives the memory back), with the
      // pending bytes copied to its front.
      if (bytes_.size() > keep_) bytes_ = Bytes();
      if (bytes_.size() < pending_) {
        if (pending_ <= budget_) reserve_budget();
        bytes_.resize(std::max(pending_, std::min(budget_, std::max<uint64_t>(pending_ * 2, uint64_t{1} << 20))));
      }
      if (pending_ > 0) std::memcpy(bytes_.data(), spare_bytes_.data() + used_, pending_);
      used_ = 0;
      writing_.start([this] { return append_now(refs_); });
      if (!oversized) return Status::ok();
      // Written at once and freed: an oversized record is never beside a second buffer.
      s = wait();
      spare_bytes_ = Bytes();
      return s;
    }
    s = append_now(refs_);
    report_warning();
    dims_.clear();
  }
  if (pending_ > 0 && used_ > 0) std::memmove(bytes_.data(), bytes_.data() + used_, pending_);
  used_ = 0;
  window_payload_ = 0;
  // A window that grew past the caller's budget for one oversized record gives the
  // memory back (a raw window keeps what it grew to within the budget, so members
  // larger than kSmallWindowBytes do not fault in fresh memory each).
  if (bytes_.size() > keep_ && pending_ <= budget_) {
    Bytes smaller(bytes_.begin(), bytes_.begin() + static_cast<ptrdiff_t>(pending_));
    bytes_.swap(smaller);
  }
  return s;
}

Status RecordWindow::flush() {
  Status s = hand_on();
  Status written = wait();
  return s.is_ok() ? written : s;
}

Status RecordWindow::wait() {
  Status s = writing_.wait();
  PackedRecords* pending = std::exchange(table_pending_, nullptr);
  if (s.is_ok() && pending != nullptr) s = writer_.write_packed_table(*pending);
  report_warning();
  return s;
}

Status RecordWindow::append(std::span<const RecordRef> records) {
  ZREC_RETURN_IF_ERROR(flush());
  Status s = append_now(records);
  report_warning();
  return s;
}

Status RecordWindow::append_behind(std::span<const RecordRef> records) {
  if (!write_behind_) return append(records);
  ZREC_RETURN_IF_ERROR(flush());
  writing_.start([this, records] { return append_now(records); });
  return Status::ok();
}

Status RecordWindow::append_behind(PackedRecords& records) {
  if (!write_behind_) {
    ZREC_RETURN_IF_ERROR(flush());
    return writer_.append_packed(records);
  }
  ZREC_RETURN_IF_ERROR(hand_on());
  // The batch before: its payload written, its table not yet.
  const Status written = writing_.wait();
  PackedRecords* before = std::exchange(table_pending_, nullptr);
  ZREC_RETURN_IF_ERROR(written);
  table_pending_ = &records;
  writing_.start([this, &records] { return writer_.write_packed_payload(records); });
  // Performance note: a tmpfs write is mostly page allocation, and the RecordLocs were
  // a fifth of the write thread's; written here, beside the next payload, they cost the
  // reading thread the time it waited.
  return before != nullptr ? writer_.write_packed_table(*before) : Status::ok();
}

}  // namespace zrec::cli
