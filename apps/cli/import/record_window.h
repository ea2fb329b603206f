// A bounded window of records being collected for StoreWriter::append() calls: the
// CLI's input side (npy arrays, files, stream frames, tar members) fills it, and it
// flushes itself when the byte or record budget would be exceeded, so memory stays
// bounded by the budget however long the input is.
//
// Two ways to fill it:
//   - records of known size: reserve(), write at next_payload(), add();
//   - a byte stream cut into records in place (append-stream's lines and NUL
//     framing): read into input_space(), input_written(), then cut() records off the
//     front of pending(). The bytes are read once, straight into the window, and never
//     copied again except for a partial record moved on when a window fills.
//
// Writing behind: where the process may run on two CPUs or more, a full window is
// appended on a write thread of its own (a BackgroundTask) while the caller fills a
// second buffer, so reading the input and compressing and writing the store no longer
// take turns on one CPU. At most one batch is in flight, and batches are appended in
// order, so the store's writes and syncs come in the same order as without it. Every
// call that must see the records in the writer (flush(), and through it a
// checkpoint's publication or the end) waits for the batch in flight first and
// reports its error; an error of a batch in flight is otherwise reported by the next
// call that hands a batch on. The two buffers share the budget: half each.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "zrec/store_writer.h"

#include "cli/import/expansion_check.h"
#include "zrec_support/background_task.h"

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
  // Small windows are handed on at this many bytes, whatever the budget: a small one
  // reused while it is in the CPU's caches does the work of a large one without
  // faulting in fresh memory for every byte of input (a 64 MiB window's first touch was
  // 7% of append-tar --codec raw of 256 KiB members in clearing pages alone, and 29%
  // of its zstd on one lane; docs/import.md). The budget still bounds the memory kept
  // after a record larger than this.
  static constexpr uint64_t kSmallWindowBytes = uint64_t{2} << 20;
  // Whether `writer` gets small windows: a raw store, or a writer of one lane.
  static bool small_windows(const StoreWriter& writer);

  // `writer` outlives the window. `budget_bytes`: the memory of the window's records
  // (both buffers together when writing behind). `write_behind`: append full windows
  // on a write thread (write_behind_by_default(): two CPUs or more).
  RecordWindow(StoreWriter& writer, uint64_t budget_bytes, bool write_behind = write_behind_by_default());
  // Waits for the batch in flight (its error is dropped: the caller is failing, or
  // flushed before).
  ~RecordWindow();
  RecordWindow(const RecordWindow&) = delete;
  RecordWindow& operator=(const RecordWindow&) = delete;

  // Whether windows are written behind when not told: when this process may run on two
  // CPUs or more. On one CPU the reader and the writer would still take turns, and
  // a thread would add switches between them and a second buffer's memory and cache
  // footprint for nothing.
  static bool write_behind_by_default();
  bool writes_behind() const { return write_behind_; }

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
  // Requires record_bytes + gap_bytes <= pending().size(). Hands the window on (keeping
  // what is still pending) when it reaches max_records().
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
    return sizes_.size() >= max_records_ ? hand_on() : Status::ok();
  }

  // Appends the collected records to the writer and empties the window (pending
  // streamed bytes stay, moved to the front), then waits: on return every record added
  // is in the writer (or the status says why not, the error of a batch in flight
  // included).
  Status flush();

  // Waits for the batch in flight, if any, and returns its status; hands nothing new
  // on. Call it before anything else uses the writer (StoreWriter::abort, reading its
  // lengths): the write thread may be appending.
  Status wait();

  // Appends `records`, which lie in the caller's memory, after the window's records:
  // synchronously with append(), on the write thread with append_behind(), which
  // returns once they are handed on; their memory (bytes and dims) must then stay
  // unchanged until wait() or flush() returned (or the window is destroyed). Both
  // flush the window first, and return the error of a batch in flight before handing
  // anything on.
  Status append(std::span<const RecordRef> records);
  Status append_behind(std::span<const RecordRef> records);
  // append_behind() of records packed for a raw store (StoreWriter::pack), which must
  // stay unchanged until the next append or wait() returned. Only their payload is
  // written on the write thread: their RecordLocs are written on the caller's, by that
  // next call, while the next batch's payload is written. (No expansion check: raw
  // records are never larger stored.)
  Status append_behind(PackedRecords& records);

  uint64_t records_in_window() const { return sizes_.size(); }
  // Records and payload bytes the window handed to the writer (in flight included).
  uint64_t records_appended() const { return appended_records_; }
  uint64_t bytes_appended() const { return appended_bytes_; }
  // The bytes at which a buffer is handed on (kSmallWindowBytes caps small windows).
  uint64_t buffer_budget() const { return budget_; }

 private:
  using Bytes = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

  StoreWriter& writer_;
  const bool write_behind_;
  const uint64_t budget_;  // bytes at which a buffer is handed on
  const uint64_t keep_;    // memory a buffer keeps after a flush (its share of the caller's budget)
  const uint32_t ndim_;
  const bool ragged_;
  const uint64_t max_records_;
  // Reserves the whole budget once (address space only; pages come as they are first
  // written), backed by transparent huge pages where the kernel offers them: a window of
  // tiny records is otherwise one page fault per 4 KiB of input.
  void reserve_budget();
  // Makes bytes_ hold at least `need` bytes, resizing it to `size` (>= need). Past a
  // buffer's share of the budget (a record larger than it) the batch in flight is
  // waited for and the spare buffer freed first, so an oversized record costs its own
  // size and no second buffer besides.
  Status grow(uint64_t need, uint64_t size);
  // Hands the window's records to the writer (on the write thread when writing behind)
  // and empties the window, moving the pending bytes to the front of the buffer the
  // next records go into.
  Status hand_on();
  // The writer's append of `records` through the expansion check: on the write thread,
  // or the caller's.
  Status append_now(std::span<const RecordRef> records);
  // The codec warning a batch's append left, given to the check's sink on the caller's
  // thread (the sink draws on stderr, which the write thread never touches).
  void report_warning() {
    if (expansion_) expansion_->report();
  }

  Bytes bytes_;                    // the buffer being filled
  uint64_t used_ = 0;              // bytes_[0, used_) belongs to records (and dropped gaps)
  uint64_t pending_ = 0;           // bytes_[used_, used_ + pending_): streamed, not yet cut
  uint64_t window_payload_ = 0;    // payload bytes of the records in the window
  std::vector<uint64_t> offsets_;  // payload offset of each record in bytes_
  std::vector<uint64_t> sizes_;
  std::vector<uint64_t> dims_;  // ndim per record (Ragged)
  // The batch in flight: its buffer, its records' dims and its refs, untouched by the
  // caller's thread until writing_ was waited for.
  Bytes spare_bytes_;
  std::vector<uint64_t> spare_dims_;
  std::vector<RecordRef> refs_;
  // The packed batch whose payload is in flight, or was written and not its table.
  PackedRecords* table_pending_ = nullptr;
  uint64_t appended_records_ = 0, appended_bytes_ = 0;
  ExpansionCheck* expansion_ = nullptr;
  // Last: destroyed first, so no job outlives the buffers it reads.
  BackgroundTask writing_;
};

}  // namespace zrec::cli
