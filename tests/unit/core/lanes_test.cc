// The executor (zrec/lanes.h): every task runs once, lanes are exclusive within a
// run(), the first error wins, and concurrent or nested run() calls all finish.
#include "zrec/lanes.h"

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "testutil.h"
#include "zrec_support/background_task.h"

using namespace zrec;

TEST_SUITE("lanes") {
  TEST_CASE("runs every task exactly once on lanes below count()") {
    for (size_t count : {1u, 2u, 5u}) {
      Lanes lanes(count);
      std::vector<std::atomic<int>> hits(1000);
      std::vector<std::atomic<int>> busy(count);
      for (int round = 0; round < 3; ++round) {
        REQUIRE_OK(lanes.run(hits.size(), [&](size_t lane, size_t i) {
          REQUIRE(lane < count);
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
    Lanes lanes(3);
    std::atomic<int> ran{0};
    Status s = lanes.run(10000, [&](size_t, size_t i) {
      ran.fetch_add(1);
      return i == 5 ? io_error("task 5 failed") : Status::ok();
    });
    CHECK(s.message() == "task 5 failed");
    CHECK(ran.load() < 10000);
    REQUIRE_OK(lanes.run(4, [](size_t, size_t) { return Status::ok(); }));  // reusable afterwards
  }

  TEST_CASE("concurrent callers share the workers and each gets its own result") {
    // A read-ahead thread gathering while its consumer encodes: two run() at once.
    Lanes lanes(3);
    constexpr int kCallers = 4, kTasks = 2000;
    std::vector<std::vector<std::atomic<int>>> hits(kCallers);
    for (auto& h : hits) h = std::vector<std::atomic<int>>(kTasks);
    std::vector<Status> results(kCallers);
    std::vector<std::thread> callers;
    for (int c = 0; c < kCallers; ++c)
      callers.emplace_back([&, c] {
        std::vector<std::atomic<int>> busy(lanes.count());
        results[c] = lanes.run(kTasks, [&](size_t lane, size_t i) {
          if (busy[lane].fetch_add(1) != 0) return io_error("lane shared within one run()");
          hits[c][i].fetch_add(1);
          busy[lane].fetch_sub(1);
          return c == 3 && i == 7 ? io_error("caller 3 failed") : Status::ok();
        });
      });
    for (auto& t : callers) t.join();
    for (int c = 0; c < 3; ++c) {
      REQUIRE_OK(results[c]);
      for (auto& h : hits[c]) CHECK(h.load() == 1);
    }
    CHECK(results[3].message() == "caller 3 failed");
  }

  TEST_CASE("a task may run a nested loop on the same lanes") {
    Lanes lanes(2);
    std::atomic<int> inner{0};
    REQUIRE_OK(lanes.run(8, [&](size_t, size_t) {
      return lanes.run(8, [&](size_t, size_t) {
        inner.fetch_add(1);
        return Status::ok();
      });
    }));
    CHECK(inner.load() == 64);
  }

  TEST_CASE("a background task returns its status, and an exception becomes one") {
    BackgroundTask task;
    CHECK(!task.started());
    REQUIRE_OK(task.wait());
    task.start([] { return io_error("read-ahead failed"); });
    CHECK(task.started());
    CHECK(task.wait().message() == "read-ahead failed");
    CHECK(!task.started());
    task.start([]() -> Status { throw std::runtime_error("boom"); });
    CHECK(task.wait().message() == "background task failed: boom");
  }

  TEST_CASE("a background task runs its jobs one at a time on one thread of its own") {
    BackgroundTask task;
    std::vector<std::thread::id> ran;
    int done = 0;
    for (int i = 0; i < 50; ++i) {
      task.start([&ran, &done] {
        ran.push_back(std::this_thread::get_id());
        ++done;  // the owner reads it after wait(): no lock needed
        return Status::ok();
      });
      if (i % 2 == 0) REQUIRE_OK(task.wait());  // else the next start() waits for it
    }
    REQUIRE_OK(task.wait());
    CHECK(done == 50);
    REQUIRE(ran.size() == 50);
    CHECK(ran.front() != std::this_thread::get_id());
    for (const auto& id : ran) CHECK(id == ran.front());
  }

  TEST_CASE("the lane budget follows docs/format.md section 9 unless overridden") {
    CHECK(write_lane_budget(7) == 7);
    CHECK(read_lane_budget(3) == 3);
    CHECK(write_lane_budget() == std::max<size_t>(1, available_cpus() * 3 / 4));
    CHECK(read_lane_budget() >= write_lane_budget());
  }
}
