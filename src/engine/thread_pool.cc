// Worker lanes and the thread budget.
#include "engine/thread_pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace zrec::engine {

namespace {

// Blocks SIGINT/SIGTERM/SIGHUP/SIGQUIT in the calling thread while it lives, so that
// threads started meanwhile never take them (threads inherit the creator's mask): a
// process-directed signal then goes to a thread that can act on it (the CLI's main
// thread, whose blocked read(2) it must interrupt).
class QuietSignals {
 public:
  QuietSignals() {
    sigset_t block;
    sigemptyset(&block);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&block, sig);
    ::pthread_sigmask(SIG_BLOCK, &block, &old_);
  }
  ~QuietSignals() { ::pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

 private:
  sigset_t old_;
};

}  // namespace

std::thread start_background_thread(std::function<void()> fn) {
  QuietSignals quiet;
  return std::thread(std::move(fn));
}

ThreadPool::ThreadPool(size_t lanes) : lanes_(std::max<size_t>(1, lanes)) {
  QuietSignals quiet;
  for (size_t lane = 1; lane < lanes_; ++lane) threads_.emplace_back([this, lane] { worker_loop(lane); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::work(size_t lane) {
  while (!failed_.load(std::memory_order_relaxed)) {
    size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= count_) break;
    Status s = (*task_)(lane, i);
    if (!s.is_ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (first_error_.is_ok()) first_error_ = std::move(s);
      failed_.store(true, std::memory_order_relaxed);
    }
  }
}

void ThreadPool::worker_loop(size_t lane) {
  uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    work(lane);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (--busy_workers_ == 0) done_cv_.notify_one();
    }
  }
}

Status ThreadPool::run(size_t count, const std::function<Status(size_t, size_t)>& task) {
  if (count == 0) return Status::ok();
  if (lanes_ == 1 || count == 1) {
    for (size_t i = 0; i < count; ++i) ZREC_RETURN_IF_ERROR(task(0, i));
    return Status::ok();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    task_ = &task;
    count_ = count;
    next_.store(0);
    failed_.store(false);
    first_error_ = Status::ok();
    busy_workers_ = threads_.size();
    ++generation_;
  }
  start_cv_.notify_all();
  work(0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [&] { return busy_workers_ == 0; });
  task_ = nullptr;
  return std::exchange(first_error_, Status::ok());
}

size_t available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return std::max(1u, std::thread::hardware_concurrency());
  return std::max(1, CPU_COUNT(&set));
}

size_t available_physical_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return available_cpus();
  std::set<std::pair<std::string, std::string>> cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream pkg(base + "physical_package_id"), core(base + "core_id");
    std::string p, c;
    if (!(pkg >> p) || !(core >> c)) return available_cpus();
    cores.emplace(p, c);
  }
  return std::max<size_t>(1, cores.size());
}

size_t read_lanes(size_t override_lanes) {
  if (override_lanes > 0) return override_lanes;
  return std::max({size_t{1}, available_physical_cores(), available_cpus() * 3 / 4});
}

size_t write_lanes(size_t override_lanes) {
  if (override_lanes > 0) return override_lanes;
  return std::max<size_t>(1, available_cpus() * 3 / 4);
}

}  // namespace zrec::engine
