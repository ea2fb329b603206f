// A bounded window of records being collected for one StoreWriter::append() call:
// the CLI's input side (npy arrays, files, stream frames) fills it, and it flushes
// itself when the byte or record budget would be exceeded, so memory stays bounded
// by the budget however long the input is.
//
// Two ways to fill it:
//   - records of known size: reserve(), write at next_payload(), add();
//   - a byte stream cut into records in place (append-stream's lines and NUL
//     framing): read into input_space(), input_written(), then cut() records off the
//     front of pending(). The bytes are read once, straight into the window, and never
//     copied again except for a partial record moved to the front when a window fills.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "zrec/store_writer.h"

#include "cli/import/expansion_check.h"

namespace zrec::cli {

// An allocator whose resize() leaves new bytes uninitialized: every byte of the window
// is written (read into, or filled with a record) before it is read, so zeroing up to
// the whole budget first would be one more pass over memory, and the pass that faults
// its pages in.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class RecordWindow {
 public:
  // Records per window are also capped, since each costs bookkeeping besides its bytes.
  // Encoded stores written on several lanes: enough records for every lane to get
  // chunks of its own.
  static constexpr uint64_t kMaxRecords = uint64_t{1} << 18;
  // Small windows, for raw stores (a window is only copied into the store's files) and
  // stores encoded on one lane (nothing encodes beside the record being encoded): a
  // window this small (1.4 MiB of ~90-byte lines, their bookkeeping about as much)
  // stays in the CPU's caches and is faulted in once, where a 2^18-record one (22 MiB
  // of lines, 16 MiB of bookkeeping) went to memory and back. Measured on 64 MiB of
  // lines, CPU seconds of the whole append-stream: 0.20 at 2^16, 0.15 at 2^14 (0.59 at
  // 2^18 before the writer's packing was fused into one pass; docs/bench.md).
  static constexpr uint64_t kSmallWindowRecords = uint64_t{1} << 14;
  // Small windows are flushed at this many bytes, whatever the budget: a small one
  // reused while it is in the CPU's caches does the work of a large one without
  // faulting in fresh memory for every byte of input (a 64 MiB window's first touch was
  // 7% of append-tar --codec raw of 256 KiB members in clearing pages alone, and 29%
  // of its zstd on one lane; docs/import.md). The budget still bounds the memory kept
  // after a record larger than this.
  static constexpr uint64_t kSmallWindowBytes = uint64_t{2} << 20;
  // Whether `writer` gets small windows: a raw store, or a writer of one lane.
  static bool small_windows(const StoreWriter& writer);

  RecordWindow(StoreWriter& writer, uint64_t budget_bytes);

  // The first window is checked for a codec that stores more than it reads
  // (expansion_check.h); null: not checked. `check` outlives the window.
  void set_expansion_check(ExpansionCheck* check) { expansion_ = check; }

  // kSmallWindowRecords for small windows (small_windows()), kMaxRecords otherwise.
  uint64_t max_records() const { return max_records_; }

  // Makes room for `count` records of `bytes_each` payload bytes, flushing first if
  // they would not fit; returns how many (>= 1) may be added now, in one go.
  Result<uint64_t> reserve(uint64_t count, uint64_t bytes_each);

  // Payload destination of the next record (valid until the next reserve/flush).
  uint8_t* next_payload() { return bytes_.data() + used_; }

  // Adds a record whose payload the caller wrote at next_payload(). For Ragged,
  // `dims` holds schema.ndim entries (copied).
  void add(uint64_t bytes, const uint64_t* dims);

  // Writable room for at least `min_bytes` of streamed input after the pending bytes.
  // Flushes the window first (keeping the pending bytes, moved to the front) when the
  // budget would be exceeded, and grows past the budget only for a pending record
  // larger than it. The span stays valid until the next call that changes the window.
  Result<std::span<uint8_t>> input_space(uint64_t min_bytes);
  // The caller wrote n bytes at the start of the last input_space().
  void input_written(uint64_t n) { pending_ += n; }
  // Streamed bytes not yet cut into records.
  std::span<const uint8_t> pending() const { return {bytes_.data() + used_, pending_}; }
  // Takes the first `record_bytes` of pending() as a record (Ragged: `dims` as in add())
  // if `keep`, or drops them if not; then drops `gap_bytes` more (a delimiter).
  // Requires record_bytes + gap_bytes <= pending().size(). Flushes (keeping what is
  // still pending) when the window reaches max_records().
  // (Inline: append-stream calls it once per line, of ~100 bytes each.)
  Status cut(uint64_t record_bytes, uint64_t gap_bytes, bool keep, const uint64_t* dims) {
    assert(record_bytes + gap_bytes <= pending_);
    if (keep) {
      offsets_.push_back(used_);
      sizes_.push_back(record_bytes);
      if (ragged_) {
        if (ndim_ == 1) dims_.push_back(*dims);
        else dims_.insert(dims_.end(), dims, dims + ndim_);
      }
      window_payload_ += record_bytes;
    }
    used_ += record_bytes + gap_bytes;
    pending_ -= record_bytes + gap_bytes;
    return sizes_.size() >= max_records_ ? flush() : Status::ok();
  }

  // Appends the collected records to the writer and empties the window (pending
  // streamed bytes stay, moved to the front).
  Status flush();

  uint64_t records_in_window() const { return sizes_.size(); }
  uint64_t records_appended() const { return appended_records_; }
  uint64_t bytes_appended() const { return appended_bytes_; }
  // The bytes at which the window is flushed (kSmallWindowBytes caps small windows).
  uint64_t buffer_budget() const { return budget_; }

 private:
  StoreWriter& writer_;
  const uint64_t budget_;  // bytes at which the window is flushed
  const uint64_t keep_;    // memory kept after a flush (the caller's budget)
  const uint32_t ndim_;
  const bool ragged_;
  const uint64_t max_records_;
  // Reserves the whole budget once (address space only; pages come as they are first
  // written), backed by transparent huge pages where the kernel offers them: a window of
  // tiny records is otherwise one page fault per 4 KiB of input.
  void reserve_budget();

  std::vector<uint8_t, UninitializedAllocator<uint8_t>> bytes_;
  uint64_t used_ = 0;              // bytes_[0, used_) belongs to records (and dropped gaps)
  uint64_t pending_ = 0;           // bytes_[used_, used_ + pending_): streamed, not yet cut
  uint64_t window_payload_ = 0;    // payload bytes of the records in the window
  std::vector<uint64_t> offsets_;  // payload offset of each record in bytes_
  std::vector<uint64_t> sizes_;
  std::vector<uint64_t> dims_;  // ndim per record (Ragged)
  std::vector<RecordRef> refs_;
  uint64_t appended_records_ = 0, appended_bytes_ = 0;
  ExpansionCheck* expansion_ = nullptr;
};

}  // namespace zrec::cli
