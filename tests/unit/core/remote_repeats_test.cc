// The copies a remote scan keeps of records it meets again in a later window
// (store/remote_repeats.h): which positions keep and which take, within the budget, and
// a keeper's failure reaching whoever waits for its copy.
#include "store/remote_repeats.h"

#include <thread>
#include <vector>

#include "testutil.h"

using namespace zrec;
using store::RemoteRepeats;

namespace {

std::vector<RecordLoc> locs_of(size_t n, uint32_t bytes) {
  std::vector<RecordLoc> locs(n);
  for (auto& loc : locs) loc.logic_length = loc.phys_length = bytes;
  return locs;
}

}  // namespace

TEST_CASE("a record met again in a later window comes from the copy its first read kept") {
  const std::vector<uint64_t> ids{7, 8, 7, 9, 7};
  const auto locs = locs_of(ids.size(), 4);
  RemoteRepeats repeats;
  repeats.begin_chunk(ids, locs, 1 << 20);
  // Windows [0, 2) and [2, 5): positions 2 and 4 repeat position 0, of the first window.
  CHECK_FALSE(repeats.plan(0, 0));
  CHECK_FALSE(repeats.plan(1, 0));
  CHECK(repeats.plan(2, 2));
  CHECK_FALSE(repeats.plan(3, 2));
  CHECK(repeats.plan(4, 2));
  const uint8_t record[4] = {1, 2, 3, 4};
  repeats.read(0, record, 4);
  uint8_t out[4] = {};
  REQUIRE(repeats.take(2, out, 4).is_ok());
  CHECK(std::vector<uint8_t>(out, out + 4) == std::vector<uint8_t>(record, record + 4));
  uint8_t again[4] = {};
  REQUIRE(repeats.take(4, again, 4).is_ok());
  CHECK(again[3] == 4);
}

TEST_CASE("a repeat in its keeper's own window is read with it, not from a copy") {
  const std::vector<uint64_t> ids{5, 5, 6};
  RemoteRepeats repeats;
  repeats.begin_chunk(ids, locs_of(3, 8), 1 << 20);
  CHECK_FALSE(repeats.plan(0, 0));
  CHECK_FALSE(repeats.plan(1, 0));
  CHECK_FALSE(repeats.from_copy(1));
}

TEST_CASE("past the budget a repeated record is fetched again") {
  const std::vector<uint64_t> ids{1, 2, 1, 2};
  RemoteRepeats repeats;
  repeats.begin_chunk(ids, locs_of(4, 100), 150);  // room for one copy of 100 bytes
  CHECK(repeats.plan(2, 2));                       // record 1's copy, kept first
  CHECK_FALSE(repeats.plan(3, 2));                 // record 2: no room left, fetched again
}

TEST_CASE("a keeper whose read failed fails whoever waits for its copy") {
  const std::vector<uint64_t> ids{3, 3};
  RemoteRepeats repeats;
  repeats.begin_chunk(ids, locs_of(2, 4), 1 << 20);
  REQUIRE(repeats.plan(1, 1));
  Status taken;
  std::thread waiter([&] {
    uint8_t out[4];
    taken = repeats.take(1, out, 4);
  });
  repeats.failed(0, Status(StatusCode::kIoError, "connection reset"));
  waiter.join();
  CHECK(taken.message() == "connection reset");
}
