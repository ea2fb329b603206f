// The executor: a pool of worker lanes running status-returning parallel loops
// (docs/format.md §9). A program makes one and hands it to every store, writer, verify
// and dictionary trainer it runs (Context::lanes, zrec/context.h; a digest runs on its store's),
// so an operation that reads and writes at once still runs on the lanes it was given, not
// one pool each.
//
//   auto lanes = std::make_shared<zrec::Lanes>(zrec::read_lane_budget());
//   ZREC_ASSIGN_OR_RETURN(auto store, zrec::Store::open("tokens/", {}, {.lanes = lanes}));
//   ZREC_RETURN_IF_ERROR(lanes->run(n, [&](size_t lane, size_t i) { return work(lane, i); }));
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "zrec/status.h"

namespace zrec {

class Lanes {
 public:
  // `count` lanes (0 counts as 1): the thread that calls run() and count - 1 long-lived
  // worker threads. With one lane run() is a plain serial loop on its caller.
  explicit Lanes(size_t count);
  ~Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  size_t count() const { return count_; }

  // Calls task(lane, i) for every i in [0, tasks), tasks claimed dynamically; returns
  // when all have finished. `lane` < count() identifies per-lane scratch: within one
  // run() no two tasks run on the same lane at once. The first error wins: no new task
  // of this run() starts after it, and run() returns it.
  // Several threads may call run() at once (a read-ahead gathering while its consumer
  // encodes): their tasks share the workers, each caller working on its own loop, so
  // no call waits for another to finish. A task may itself call run().
  Status run(size_t tasks, const std::function<Status(size_t lane, size_t task)>& task);

 private:
  struct Loop;
  void worker(size_t lane);
  static void work(Loop& loop, size_t lane);

  const size_t count_;
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;  // workers: a loop with unclaimed tasks, or stop
  std::condition_variable idle_;  // run(): a worker left its loop
  std::list<Loop*> loops_;        // guarded by mu_, oldest first
  bool stopping_ = false;         // guarded by mu_
};

// The lanes an operation asks for by default (docs/format.md §9): reads run on
// max(physical cores, 3/4 of logical cores), writes on 3/4 of logical cores, at least
// 1, counting only the CPUs of this process's affinity mask. `requested` > 0 (a caller's
// requested lane count) replaces both.
size_t read_lane_budget(size_t requested = 0);
size_t write_lane_budget(size_t requested = 0);

// The CPUs in this process's affinity mask, and the physical cores among them (distinct
// core ids in sysfs topology; the CPU count where that cannot be read).
size_t available_cpus();
size_t available_physical_cores();

// Starts a helper thread (a read-ahead) that, like the lanes' workers, never takes
// SIGINT/SIGTERM/SIGHUP/SIGQUIT, so those reach the thread that can act on them (a
// program's main thread, whose blocked read(2) they must interrupt).
std::thread start_background_thread(std::function<void()> fn);

}  // namespace zrec
