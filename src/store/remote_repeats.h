// The records a remote scan asks for again in a later window, kept from their first
// fetch until their last use, so that one scan never requests a byte range of a store
// twice (docs/remote.md, "What a remote read costs"). Within a window the plan already
// reads a repeated record once (Store's plan_remote: one claim holds every position of
// it); across windows the later positions come from here. The copies held are bounded
// (`budget` bytes at once); a repeat past the budget is fetched again.
//
// Example (one chunk of a scan):
//   repeats.begin_chunk(ids, locs, budget);
//   // planning window [begin, end): position k with repeats.plan(k, begin) is its own
//   // claim, read with repeats.take(k, dst, n) instead of a request;
//   // reading a claim: after position k's record is in dst, repeats.read(k, dst, n);
//   // a claim that failed: repeats.failed(k, status) for each of its positions.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

#include "zrec/format.h"
#include "zrec/status.h"

namespace zrec::store {

class RemoteRepeats {
 public:
  // The next chunk of the scan: its IDs and their locations (logic_length: the bytes a
  // kept copy holds). Decides which positions keep their record and which take a copy,
  // in the chunk's order, holding at most `budget` bytes at once.
  void begin_chunk(std::span<const uint64_t> ids, std::span<const RecordLoc> locs, uint64_t budget);

  // Planning the window that starts at `window_begin`: whether position k's record comes
  // from a copy kept by a position of an earlier window (then from_copy(k) says so for
  // its reader). Repeats within a window are read by one claim instead.
  bool plan(size_t k, size_t window_begin) {
    from_copy_[k] = source_[k] != kNone && source_[k] < window_begin;
    return from_copy_[k];
  }
  bool from_copy(size_t k) const { return from_copy_[k] != 0; }

  // Copies position k's record (served) into dst, once its keeper has read it; the
  // keeper's error if its read failed. Never blocks on an unclaimed read: a window opens
  // only once every claim of the windows before it is taken (ScanWindows).
  Status take(size_t k, uint8_t* dst, uint64_t n);
  // Position k's record was read into `bytes` (n of them): kept if k keeps it, and a use
  // counted if k repeats a record of its own window.
  void read(size_t k, const uint8_t* bytes, uint64_t n);
  // Position k's read failed with `status`: positions waiting for its copy get it.
  void failed(size_t k, const Status& status);

 private:
  static constexpr size_t kNone = SIZE_MAX;
  struct Copy {
    std::vector<uint8_t> bytes;
    bool ready = false;
    Status error;
    uint32_t uses = 0;  // positions still to take or read it
  };
  // With mu_ held: one use of the copy kept by `keeper` done; dropped after the last.
  void used(size_t keeper);

  std::vector<size_t> source_;      // per position: the keeper whose copy it repeats, or kNone
  std::vector<uint8_t> from_copy_;  // per position: plan() chose the copy (read by the claim's lane)
  std::mutex mu_;
  std::condition_variable ready_;
  std::unordered_map<size_t, Copy> copies_;  // by keeper position
};

}  // namespace zrec::store
