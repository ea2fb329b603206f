// The windows of Store::scan() (store/scan_windows.h): handed over whole and in order,
// a lane never waits at the end of a window for another lane's last record, and a read
// error hands over every window before the failed one, then the error.
#include "store/scan_windows.h"

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "zrec/lanes.h"

#include "testutil.h"

using namespace zrec;
using store::ScanSlot;
using store::ScanWindows;

namespace {

// Records of `bytes` each; record k is filled with the byte k.
std::vector<RecordLoc> locs_of(size_t n, uint32_t bytes) {
  std::vector<RecordLoc> locs(n);
  for (auto& loc : locs) loc.logic_length = loc.phys_length = bytes;
  return locs;
}

// Runs one chunk on `lanes` with a reader thread, as Store::scan does, and collects
// the windows the caller gets: each window's first position and its bytes.
struct Collected {
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> windows;
  Status status;
};

Collected run_chunk(Lanes& lanes, ScanWindows& windows, std::span<const uint64_t> ids, std::span<const RecordLoc> locs,
                    const ScanWindows::ReadOne& read_one) {
  std::thread reader([&] {
    windows.begin_chunk(ids, locs, 0);
    Status s = lanes.run(lanes.count(), [&](size_t lane, size_t) { return windows.work(lane, read_one); });
    windows.finish(s);
  });
  Collected out;
  while (ScanSlot* slot = windows.next()) {
    out.windows.emplace_back(slot->first_index,
                             std::vector<uint8_t>(slot->buffer.get(), slot->buffer.get() + slot->offsets.back()));
    windows.release(slot);
  }
  reader.join();
  out.status = windows.reader_status();
  return out;
}

}  // namespace

TEST_SUITE("scan_windows") {
  TEST_CASE("windows come whole and in order, each within its budget") {
    for (size_t lane_count : {1u, 2u, 3u}) {
      Lanes lanes(lane_count);
      std::vector<uint64_t> ids(101);
      for (size_t k = 0; k < ids.size(); ++k) ids[k] = k;
      const auto locs = locs_of(ids.size(), 10);
      ScanWindows windows(/*slot_budget=*/35, lanes.count());  // 3 records a window
      const auto got = run_chunk(lanes, windows, ids, locs, [&](size_t, size_t k, uint8_t* dst) {
        std::memset(dst, static_cast<int>(k), 10);
        return Status::ok();
      });
      REQUIRE_OK(got.status);
      REQUIRE(got.windows.size() == 34);
      uint64_t next = 0;
      for (const auto& [first, bytes] : got.windows) {
        CHECK(first == next);
        CHECK(bytes.size() == (first == 99 ? 20u : 30u));
        for (size_t i = 0; i < bytes.size(); ++i) CHECK(bytes[i] == static_cast<uint8_t>(first + i / 10));
        next += bytes.size() / 10;
      }
      CHECK(next == ids.size());
    }
  }

  TEST_CASE("a lane goes on to the next window while another still reads the last record of this one") {
    // Lane A holds record 3, the last of window 0, until some record of window 1 has
    // been read: with a barrier at the end of each window (the lanes' old gather of one
    // window at a time), no lane could read window 1 first, and this would time out.
    Lanes lanes(2);
    std::vector<uint64_t> ids(12);
    for (size_t k = 0; k < ids.size(); ++k) ids[k] = k;
    const auto locs = locs_of(ids.size(), 8);
    ScanWindows windows(/*slot_budget=*/32, lanes.count());  // 4 records a window, 1 a claim
    std::atomic<bool> window1_read{false}, waited_out{false};
    const auto got = run_chunk(lanes, windows, ids, locs, [&](size_t, size_t k, uint8_t* dst) {
      if (k == 3) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!window1_read.load() && std::chrono::steady_clock::now() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        waited_out = !window1_read.load();
      }
      if (k >= 4 && k < 8) window1_read = true;
      std::memset(dst, static_cast<int>(k), 8);
      return Status::ok();
    });
    REQUIRE_OK(got.status);
    CHECK_FALSE(waited_out.load());
    REQUIRE(got.windows.size() == 3);
    for (size_t w = 0; w < 3; ++w) CHECK(got.windows[w].first == 4 * w);
  }

  TEST_CASE("a read error: every window before the failed one, then the error") {
    for (size_t lane_count : {1u, 2u}) {
      Lanes lanes(lane_count);
      std::vector<uint64_t> ids(40);
      for (size_t k = 0; k < ids.size(); ++k) ids[k] = k;
      const auto locs = locs_of(ids.size(), 4);
      ScanWindows windows(/*slot_budget=*/16, lanes.count());  // 4 records a window
      const auto got = run_chunk(lanes, windows, ids, locs, [&](size_t, size_t k, uint8_t* dst) -> Status {
        if (k == 13) return io_error("record 13 is damaged");
        std::memset(dst, static_cast<int>(k), 4);
        return Status::ok();
      });
      CHECK(got.status.message() == "record 13 is damaged");
      REQUIRE(got.windows.size() == 3);  // records 0..11; window 3 (12..15) failed
      for (size_t w = 0; w < 3; ++w) CHECK(got.windows[w].first == 4 * w);
    }
  }
}
