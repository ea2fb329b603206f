// The windows of Store::scan(): two buffers that the lanes fill and the caller empties,
// in order, with no barrier between one window and the next.
//
// Performance note: scan() used to gather each window with one Lanes::run, so at the
// end of every window the lanes that were done waited for the last block, and the
// reader woke them again for the next one. For a random gather of 147 KiB records on
// 2 lanes that wait cost about a fifth of the wall time against a C loop whose lanes
// never wait for each other. Here a lane that finds nothing left to claim in the
// newest window opens the next window in the free buffer and claims from it, while
// other lanes still finish the older one; windows are handed to the caller in order,
// each once all its records are in.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "zrec/format.h"
#include "zrec/status.h"

namespace zrec::store {

// One buffer: the window it holds (ids, logical offsets) and its bytes.
struct ScanSlot {
  std::unique_ptr<uint8_t[]> buffer;
  uint64_t capacity = 0;
  std::vector<uint64_t> offsets;
  std::span<const uint64_t> ids;
  uint64_t first_index = 0;  // position of ids[0] in the scanned list
  // The order the lanes read the window's records in (positions in the window), when
  // not simply theirs: roughly by ID (ScanWindows::begin_chunk's by_id).
  std::vector<uint32_t> order;
};

class ScanWindows {
 public:
  // The most records in one window. A window's offsets cost 8 bytes a record, as much
  // as the bytes of tiny records: a scattered chunk of 2^22 one-byte records cut by
  // bytes alone made windows of 3.7 million records, 60 MB each.
  static constexpr size_t kMaxWindowRecords = size_t{1} << 20;

  // Reads record k of the current chunk into dst on `lane`.
  using ReadOne = std::function<Status(size_t lane, size_t k, uint8_t* dst)>;
  // Reads records [begin, end) of the current chunk on `lane`, record k into dst(k): a
  // reader that gains from reading a claim's records together (a remote store's ranges).
  using ReadBlock =
      std::function<Status(size_t lane, size_t begin, size_t end, const std::function<uint8_t*(size_t k)>& dst)>;
  // Plans a window of records [begin, end) of the current chunk for a reader whose
  // claims are better made in another order (a remote store: one request per claim,
  // records sorted by file and offset so that no two claims fetch the same bytes):
  // `order` gets the window's positions (begin..end-1) in claim order, `bounds` the
  // claims' starts in `order` and its size last.
  using Plan = std::function<void(size_t begin, size_t end, std::vector<size_t>& order, std::vector<size_t>& bounds)>;
  // Reads the records `ks` of one planned claim on `lane`, record k into dst(k).
  using ReadPlanned =
      std::function<Status(size_t lane, std::span<const size_t> ks, const std::function<uint8_t*(size_t k)>& dst)>;

  // slot_budget: the logical bytes of one window (at least one record each).
  ScanWindows(uint64_t slot_budget, size_t lanes) : slot_budget_(slot_budget), lanes_(lanes) {
    for (auto& slot : slots_) free_.push_back(&slot);
  }

  // The next chunk of the scan: ids (positions first_index.. in the scanned list) with
  // their RecordLocs. Called by the reader between lane runs. With by_id, the lanes
  // read each window's records (work with a ReadOne) roughly in ID order, so in the
  // order of their offsets within each data file, instead of in the window's order.
  //
  // Performance note: a shuffle's window reads records at random places of the data
  // files, and each small read then costs the kernel cache misses of its own (its
  // page's lookup and copy). 4 million one-byte records of a 10^7-record store, gathered
  // by `cat --indices-from`: 5.3-5.9 s in random order, 4.4-4.5 s sorted.
  void begin_chunk(std::span<const uint64_t> ids, std::span<const RecordLoc> locs, uint64_t first_index,
                   bool by_id = false);

  // A lane's work on the current chunk: claims blocks of records, opening windows as
  // buffers come free, until the chunk is all claimed, the caller stopped or a read
  // failed. Returns the first read error of the windows before which every window is
  // handed over (the others are dropped).
  Status work(size_t lane, const ReadOne& read_one);
  Status work(size_t lane, const ReadBlock& read_block);
  // The same with the claims `plan` makes (set before the chunk's windows open).
  void set_plan(Plan plan) { plan_ = std::move(plan); }
  Status work(size_t lane, const ReadPlanned& read_planned);

  // Reader: the scan ended (status: how); the caller gets the windows handed over so
  // far, then nullptr.
  void finish(Status status);

  // Caller: the next window in order, or nullptr when the scan is done (then
  // reader_status() says how it ended).
  ScanSlot* next();
  void release(ScanSlot* slot);
  // Caller: stop; the lanes stop claiming and the reader ends.
  void stop();
  // Reader: whether the scan should go on to the next chunk.
  bool going() const;
  const Status& reader_status() const { return reader_status_; }  // after finish()

 private:
  struct Open {  // a window being filled
    ScanSlot* slot;
    uint64_t seq;                // its place in the scan, counting from 0
    size_t begin, end;           // records [begin, end) of the chunk
    size_t next;                 // the first record no lane has claimed (unplanned)
    size_t block;                // records per claim (unplanned)
    size_t running = 0;          // claims being read
    std::vector<size_t> bounds;  // planned: claim c is slot->order[bounds[c], bounds[c + 1])
    size_t next_claim = 0;       // planned: the first claim no lane has made
    bool claimed_all() const { return bounds.empty() ? next == end : next_claim + 1 >= bounds.size(); }
  };
  // With mu_ held: a window whose records are all claimed and read is handed over, in order.
  void hand_over_done();
  // With mu_ held: opens the next window of the chunk in `slot`.
  void open_window(ScanSlot* slot);
  // With mu_ held: slot->order for records [begin, end) of the chunk, by ID buckets.
  void order_by_id(ScanSlot* slot, size_t begin, size_t end);
  // A claim's records, [begin, end) of the window's reading order, read with read_one.
  Status read_claim(size_t lane, const ScanSlot& slot, size_t window_begin, size_t begin, size_t end,
                    const ReadOne& read_one) const;
  template <typename Read>
  Status claim_loop(size_t lane, const Read& read);

  const uint64_t slot_budget_;
  const size_t lanes_;
  std::array<ScanSlot, 2> slots_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ScanSlot*> free_, filled_;
  std::deque<Open> open_;  // oldest first
  Plan plan_;
  std::vector<size_t> plan_order_;  // plan_'s output, before it becomes slot->order
  uint64_t next_seq_ = 0;
  // The current chunk.
  std::span<const uint64_t> ids_;
  std::span<const RecordLoc> locs_;
  uint64_t chunk_first_ = 0;
  bool by_id_ = false;
  std::vector<uint32_t> bucket_starts_;  // order_by_id's counts
  size_t cursor_ = 0;                    // the first record of the chunk not in a window yet
  // The first failed window: it and every later one are dropped.
  bool failed_ = false;
  uint64_t failed_seq_ = 0;
  Status error_;
  bool done_ = false, stopped_ = false;
  Status reader_status_;
};

}  // namespace zrec::store
