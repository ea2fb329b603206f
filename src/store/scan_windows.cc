// The windows of Store::scan() (scan_windows.h).
#include "store/scan_windows.h"

#include <algorithm>

#include "zrec_support/memory.h"

namespace zrec::store {

namespace {
// Claims per lane in a window: enough for dynamic balancing, few enough to stay cheap.
constexpr size_t kBlocksPerLane = 4;
}  // namespace

void ScanWindows::begin_chunk(std::span<const uint64_t> ids, std::span<const RecordLoc> locs, uint64_t first_index,
                              bool by_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ids_ = ids;
  locs_ = locs;
  chunk_first_ = first_index;
  by_id_ = by_id;
  cursor_ = 0;
}

void ScanWindows::order_by_id(ScanSlot* slot, size_t begin, size_t end) {
  // A counting sort by ID buckets of about 8 records each (linear, where a comparison
  // sort of a million records costs more than the locality gains): within a bucket
  // the records lie a few pages apart in each data file.
  const size_t n = end - begin;
  const auto [lo, hi] = std::minmax_element(ids_.begin() + begin, ids_.begin() + end);
  int shift = 0;
  while (((*hi - *lo) >> shift) > n / 8) ++shift;
  const size_t buckets = static_cast<size_t>(((*hi - *lo) >> shift) + 1);
  bucket_starts_.assign(buckets + 1, 0);
  for (size_t k = begin; k < end; ++k) ++bucket_starts_[((ids_[k] - *lo) >> shift) + 1];
  for (size_t b = 0; b < buckets; ++b) bucket_starts_[b + 1] += bucket_starts_[b];
  slot->order.resize(n);
  for (size_t k = begin; k < end; ++k)
    slot->order[bucket_starts_[(ids_[k] - *lo) >> shift]++] = static_cast<uint32_t>(k - begin);
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
  Open w;
  w.slot = slot;
  w.seq = next_seq_++;
  w.begin = w.next = begin;
  w.end = end;
  w.block = std::max<size_t>(1, (n + lanes_ * kBlocksPerLane - 1) / (lanes_ * kBlocksPerLane));
  if (plan_) {
    plan_(begin, end, plan_order_, w.bounds);
    slot->order.resize(plan_order_.size());
    for (size_t i = 0; i < plan_order_.size(); ++i) slot->order[i] = static_cast<uint32_t>(plan_order_[i] - begin);
  } else if (by_id_ && n > 1) {
    order_by_id(slot, begin, end);
  } else {
    slot->order.clear();
  }
  open_.push_back(std::move(w));
  cursor_ = end;
}

void ScanWindows::hand_over_done() {
  bool handed = false;
  while (!open_.empty()) {
    const Open& w = open_.front();
    if (!w.claimed_all() || w.running > 0) break;  // not all read yet
    if (failed_ && w.seq >= failed_seq_) break;    // dropped: finish() frees its buffer
    filled_.push_back(w.slot);
    open_.pop_front();
    handed = true;
  }
  if (handed) cv_.notify_all();
}

Status ScanWindows::read_claim(size_t lane, const ScanSlot& slot, size_t window_begin, size_t begin, size_t end,
                               const ReadOne& read_one) const {
  // In ID order the window's own arrays are visited at random: a record's ID, location
  // and offset are fetched some records ahead, so their cache misses overlap.
  constexpr size_t kAhead = 16;
  for (size_t p = begin; p < end; ++p) {
    if (!slot.order.empty() && p + kAhead < end) {
      const size_t next = slot.order[p + kAhead - window_begin];
      __builtin_prefetch(&ids_[window_begin + next]);
      __builtin_prefetch(&locs_[window_begin + next]);
      __builtin_prefetch(&slot.offsets[next]);
    }
    const size_t at = slot.order.empty() ? p - window_begin : slot.order[p - window_begin];
    ZREC_RETURN_IF_ERROR(read_one(lane, window_begin + at, slot.buffer.get() + slot.offsets[at]));
  }
  return Status::ok();
}

Status ScanWindows::work(size_t lane, const ReadOne& read_one) {
  return claim_loop(lane, [&](const ScanSlot& slot, size_t window_begin, size_t begin, size_t end) {
    return read_claim(lane, slot, window_begin, begin, end, read_one);
  });
}

Status ScanWindows::work(size_t lane, const ReadBlock& read_block) {
  // Records [begin, end) of the chunk together, in their order (by_id is for ReadOne).
  return claim_loop(lane, [&](const ScanSlot& slot, size_t window_begin, size_t begin, size_t end) {
    return read_block(lane, begin, end, [&](size_t k) { return slot.buffer.get() + slot.offsets[k - window_begin]; });
  });
}

Status ScanWindows::work(size_t lane, const ReadPlanned& read_planned) {
  // A planned claim: its positions of the window's order, as chunk positions.
  std::vector<size_t> ks;
  return claim_loop(lane, [&](const ScanSlot& slot, size_t window_begin, size_t begin, size_t end) {
    ks.clear();
    for (size_t p = begin; p < end; ++p) ks.push_back(window_begin + slot.order[p - window_begin]);
    return read_planned(lane, ks, [&](size_t k) { return slot.buffer.get() + slot.offsets[k - window_begin]; });
  });
}

template <typename Read>
Status ScanWindows::claim_loop(size_t lane, const Read& read) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (stopped_) return Status::ok();
    // Only the newest window can have records no lane has claimed.
    Open* w = open_.empty() ? nullptr : &open_.back();
    if (w != nullptr && failed_ && w->seq >= failed_seq_) w = nullptr;  // no new claims in a failed window
    if (w == nullptr || w->claimed_all()) {
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
    size_t begin, end;  // positions of the chunk, or (planned) of the window's order from w->begin
    if (w->bounds.empty()) {
      begin = w->next;
      end = std::min(w->end, w->next + w->block);
      w->next = end;
    } else {
      const size_t c = w->next_claim++;
      begin = w->begin + w->bounds[c];
      end = w->begin + w->bounds[c + 1];
    }
    ++w->running;
    lock.unlock();
    Status s = read(*w->slot, w->begin, begin, end);
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
