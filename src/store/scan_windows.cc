// The windows of Store::scan() (scan_windows.h).
#include "store/scan_windows.h"

#include <algorithm>

#include "zrec_support/memory.h"

namespace zrec::store {

namespace {
// Claims per lane in a window: enough for dynamic balancing, few enough to stay cheap.
constexpr size_t kBlocksPerLane = 4;
}  // namespace

void ScanWindows::begin_chunk(std::span<const uint64_t> ids, std::span<const RecordLoc> locs, uint64_t first_index) {
  std::lock_guard<std::mutex> lock(mu_);
  ids_ = ids;
  locs_ = locs;
  chunk_first_ = first_index;
  cursor_ = 0;
}

void ScanWindows::open_window(ScanSlot* slot) {
  // Cut a window of at most slot_budget_ logical bytes (at least one record) and
  // kMaxWindowRecords records.
  const size_t begin = cursor_;
  size_t end = begin;
  uint64_t bytes = 0;
  slot->offsets.assign(1, 0);
  while (end < ids_.size() && end - begin < kMaxWindowRecords &&
         (end == begin || bytes + locs_[end].logic_length <= slot_budget_)) {
    bytes += locs_[end].logic_length;
    slot->offsets.push_back(bytes);
    ++end;
  }
  // Not value-initialized: a logic_length is only a claim until the record decodes,
  // and untouched pages cost nothing, so a damaged table claiming 2 GiB records can't
  // make a reader fill 2 GiB of memory (decoders write only what frames really hold).
  // A buffer grown for one oversized record shrinks again.
  if (slot->capacity < bytes || slot->capacity > 2 * std::max(bytes, slot_budget_)) {
    slot->buffer.reset();
    slot->buffer = std::make_unique_for_overwrite<uint8_t[]>(bytes);
    slot->capacity = bytes;
    // Performance note: a window's buffer is written once per window; faulted in 4 KiB
    // at a time, the first two windows of a scan cost 16,384 faults per 64 MiB (a fifth
    // of a remote gather of 147 KiB records). Huge pages keep the bound above: pages
    // are still only touched where records decode.
    advise_huge_pages(slot->buffer.get(), bytes);
  }
  slot->ids = ids_.subspan(begin, end - begin);
  slot->first_index = chunk_first_ + begin;
  const size_t n = end - begin;
  const size_t block = std::max<size_t>(1, (n + lanes_ * kBlocksPerLane - 1) / (lanes_ * kBlocksPerLane));
  open_.push_back(Open{slot, next_seq_++, begin, end, begin, block});
  cursor_ = end;
}

void ScanWindows::hand_over_done() {
  bool handed = false;
  while (!open_.empty()) {
    const Open& w = open_.front();
    if (w.next < w.end || w.running > 0) break;  // not all read yet
    if (failed_ && w.seq >= failed_seq_) break;  // dropped: finish() frees its buffer
    filled_.push_back(w.slot);
    open_.pop_front();
    handed = true;
  }
  if (handed) cv_.notify_all();
}

Status ScanWindows::work(size_t lane, const ReadOne& read_one) {
  return work(lane, ReadBlock([&](size_t l, size_t begin, size_t end, const std::function<uint8_t*(size_t)>& dst) {
                for (size_t k = begin; k < end; ++k) ZREC_RETURN_IF_ERROR(read_one(l, k, dst(k)));
                return Status::ok();
              }));
}

Status ScanWindows::work(size_t lane, const ReadBlock& read_block) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopped_) return Status::ok();
    // Only the newest window can have records no lane has claimed.
    Open* w = open_.empty() ? nullptr : &open_.back();
    if (w != nullptr && failed_ && w->seq >= failed_seq_) w = nullptr;  // no new claims in a failed window
    if (w == nullptr || w->next == w->end) {
      if (failed_ || cursor_ == ids_.size()) break;
      if (free_.empty()) {
        // Both buffers hold windows: the caller frees one, or the lanes hand over the
        // oldest one (a lane is reading it: a window's last claim is being read).
        cv_.wait(lock);
        continue;
      }
      ScanSlot* slot = free_.front();
      free_.pop_front();
      open_window(slot);
      w = &open_.back();
    }
    const size_t begin = w->next, end = std::min(w->end, w->next + w->block);
    w->next = end;
    ++w->running;
    lock.unlock();
    ScanSlot* slot = w->slot;
    const size_t window_begin = w->begin;
    Status s =
        read_block(lane, begin, end, [&](size_t k) { return slot->buffer.get() + slot->offsets[k - window_begin]; });
    lock.lock();
    // `w` is still valid: a deque's push_back keeps references to its elements, and a
    // window with a claim running is never popped.
    --w->running;
    if (!s.is_ok() && (!failed_ || w->seq < failed_seq_)) {
      failed_ = true;
      failed_seq_ = w->seq;
      error_ = std::move(s);
    }
    hand_over_done();
    if (failed_) cv_.notify_all();
  }
  return Status::ok();
}

void ScanWindows::finish(Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  // Windows from the failed one on were never handed over: back to the free list.
  while (!open_.empty()) {
    free_.push_back(open_.back().slot);
    open_.pop_back();
  }
  if (status.is_ok() && failed_) status = error_;
  done_ = true;
  reader_status_ = std::move(status);
  cv_.notify_all();
}

bool ScanWindows::going() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !stopped_ && !failed_;
}

ScanSlot* ScanWindows::next() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return done_ || !filled_.empty(); });
  if (filled_.empty()) return nullptr;
  ScanSlot* slot = filled_.front();
  filled_.pop_front();
  return slot;
}

void ScanWindows::release(ScanSlot* slot) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(slot);
  cv_.notify_all();
}

void ScanWindows::stop() {
  std::lock_guard<std::mutex> lock(mu_);
  stopped_ = true;
  cv_.notify_all();
}

}  // namespace zrec::store
