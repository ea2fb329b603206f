// The windows of Store::scan() (store/scan_windows.h): handed over whole and in order,
// a lane never waits at the end of a window for another lane's last record, and a read
// error hands over every window before the failed one, then the error.
#include "store/scan_windows.h"

#include <algorithm>
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
                    const ScanWindows::ReadOne& read_one, bool by_id = false) {
  std::thread reader([&] {
    windows.begin_chunk(ids, locs, 0, by_id);
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

  TEST_CASE("by_id: each window's records are read by ID, and still come in the window's order") {
    // A shuffle of 5,000 IDs in windows of 1,000 records: each window's 1,000 IDs span
    // about 5,000, read in buckets of about 8 of them: 64 IDs wide (5,000 / (1,000 / 8),
    // rounded up to a power of two).
    const size_t n = 5000;
    std::vector<uint64_t> ids(n);
    for (size_t k = 0; k < n; ++k) ids[k] = (k * 2654435761u) % n;  // a permutation: 2654435761 is odd, n = 2^3 * 5^4
    const auto locs = locs_of(n, 1);
    Lanes lanes(1);
    ScanWindows windows(/*slot_budget=*/1000, lanes.count());
    std::vector<uint64_t> read;
    const auto got = run_chunk(
        lanes, windows, ids, locs,
        [&](size_t, size_t k, uint8_t* dst) {
          read.push_back(ids[k]);
          *dst = static_cast<uint8_t>(ids[k]);
          return Status::ok();
        },
        /*by_id=*/true);
    REQUIRE_OK(got.status);
    REQUIRE(got.windows.size() == 5);
    for (size_t w = 0; w < 5; ++w) {
      CHECK(got.windows[w].first == w * 1000);
      for (size_t i = 0; i < 1000; ++i) CHECK(got.windows[w].second[i] == static_cast<uint8_t>(ids[w * 1000 + i]));
      // Read in ID order, give or take a bucket.
      const auto lo = *std::min_element(ids.begin() + w * 1000, ids.begin() + (w + 1) * 1000);
      for (size_t i = 1; i < 1000; ++i) CHECK(((read[w * 1000 + i] - lo) >> 6) >= ((read[w * 1000 + i - 1] - lo) >> 6));
    }
  }

  TEST_CASE("a window holds at most kMaxWindowRecords records, whatever its byte budget") {
    const size_t n = ScanWindows::kMaxWindowRecords + 5;
    std::vector<uint64_t> ids(n);
    for (size_t k = 0; k < n; ++k) ids[k] = k;
    const auto locs = locs_of(n, 1);
    Lanes lanes(2);
    ScanWindows windows(/*slot_budget=*/uint64_t{1} << 30, lanes.count());
    const auto got = run_chunk(lanes, windows, ids, locs, [&](size_t, size_t, uint8_t* dst) {
      *dst = 1;
      return Status::ok();
    });
    REQUIRE_OK(got.status);
    REQUIRE(got.windows.size() == 2);
    CHECK(got.windows[0].second.size() == ScanWindows::kMaxWindowRecords);
    CHECK(got.windows[1].first == ScanWindows::kMaxWindowRecords);
    CHECK(got.windows[1].second.size() == 5);
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
