// A fixed pool of worker lanes (docs/format.md §9) running status-returning parallel loops.
// Lane 0 is the calling thread; lanes 1..n-1 are long-lived threads. With one lane
// run() is a plain serial loop on the caller, with no threads at all.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "zrec/status.h"

namespace zrec::engine {

class ThreadPool {
 public:
  explicit ThreadPool(size_t lanes);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  size_t lanes() const { return lanes_; }

  // Calls task(lane, i) for every i in [0, count), tasks claimed dynamically by lanes.
  // `lane` < lanes() identifies per-lane scratch; one lane never runs two tasks at once.
  // The first error wins: lanes stop claiming new tasks and run() returns it after all
  // lanes have finished (a barrier). Not reentrant: one run() at a time per pool.
  Status run(size_t count, const std::function<Status(size_t lane, size_t task)>& task);

 private:
  void worker_loop(size_t lane);
  void work(size_t lane);

  const size_t lanes_;
  std::vector<std::thread> threads_;

  std::mutex mu_;
  std::condition_variable start_cv_;  // workers wait for a new generation
  std::condition_variable done_cv_;   // run() waits for workers to finish
  // Guarded by mu_:
  uint64_t generation_ = 0;
  size_t busy_workers_ = 0;
  bool stopping_ = false;
  Status first_error_;
  // Set by run() before publishing a generation, read by workers after (mu_ orders it):
  const std::function<Status(size_t, size_t)>* task_ = nullptr;
  size_t count_ = 0;
  std::atomic<size_t> next_{0};
  std::atomic<bool> failed_{false};
};

// Starts a helper thread (e.g. a read-ahead) that, like the pool's workers, never takes
// SIGINT/SIGTERM/SIGHUP/SIGQUIT, so those reach the thread that can act on them.
std::thread start_background_thread(std::function<void()> fn);

// Lanes for this process: the CPUs in its affinity mask (sched_getaffinity).
size_t available_cpus();
// Physical cores among them (distinct core ids in sysfs topology; falls back to cpus).
size_t available_physical_cores();

// docs/format.md §9 thread budget: reads max(physical cores, 3/4 of logical cores), writes
// 3/4 of logical cores, at least 1. `override_lanes` > 0 (from --threads or
// ZREC_THREADS) replaces both.
size_t read_lanes(size_t override_lanes = 0);
size_t write_lanes(size_t override_lanes = 0);

}  // namespace zrec::engine
