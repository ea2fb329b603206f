// The worker lanes: every task runs once, lanes are exclusive, the first error wins.
#include "engine/thread_pool.h"

#include <atomic>
#include <mutex>
#include <set>

#include "testutil.h"

using namespace zrec;

TEST_SUITE("thread_pool") {
  TEST_CASE("runs every task exactly once on lanes below lanes()") {
    for (size_t lanes : {1u, 2u, 5u}) {
      engine::ThreadPool pool(lanes);
      std::vector<std::atomic<int>> hits(1000);
      std::vector<std::atomic<int>> busy(lanes);
      for (int round = 0; round < 3; ++round) {
        REQUIRE_OK(pool.run(hits.size(), [&](size_t lane, size_t i) {
          REQUIRE(lane < lanes);
          REQUIRE(busy[lane].fetch_add(1) == 0);  // one task per lane at a time
          hits[i].fetch_add(1);
          busy[lane].fetch_sub(1);
          return Status::ok();
        }));
      }
      for (auto& h : hits) CHECK(h.load() == 3);
    }
  }

  TEST_CASE("the first error wins and later tasks are not started") {
    engine::ThreadPool pool(3);
    std::atomic<int> ran{0};
    Status s = pool.run(10000, [&](size_t, size_t i) {
      ran.fetch_add(1);
      return i == 5 ? io_error("task 5 failed") : Status::ok();
    });
    CHECK(s.message() == "task 5 failed");
    CHECK(ran.load() < 10000);
    REQUIRE_OK(pool.run(4, [](size_t, size_t) { return Status::ok(); }));  // reusable afterwards
  }

  TEST_CASE("the thread budget follows docs/format.md section 9 unless overridden") {
    CHECK(engine::write_lanes(7) == 7);
    CHECK(engine::read_lanes(3) == 3);
    CHECK(engine::write_lanes() == std::max<size_t>(1, engine::available_cpus() * 3 / 4));
    CHECK(engine::read_lanes() >= engine::write_lanes());
  }
}
