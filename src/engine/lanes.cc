// The executor (zrec/lanes.h) and the lane budget.
#include "zrec/lanes.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <utility>

namespace zrec {

// One run() call: its tasks, claimed by its caller and by any idle worker.
struct Lanes::Loop {
  const std::function<Status(size_t, size_t)>* task = nullptr;
  size_t tasks = 0;
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  size_t workers_inside = 0;  // guarded by Lanes::mu_
  Status first_error;         // guarded by Lanes::mu_
  std::mutex* mu = nullptr;

  bool has_unclaimed() const {
    return !failed.load(std::memory_order_relaxed) && next.load(std::memory_order_relaxed) < tasks;
  }
};

namespace {

// Blocks SIGINT/SIGTERM/SIGHUP/SIGQUIT in the calling thread while it lives, so that
// threads started meanwhile never take them (threads inherit the creator's mask): a
// process-directed signal then goes to a thread that can act on it.
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

Lanes::Lanes(size_t count) : count_(std::max<size_t>(1, count)) {
  QuietSignals quiet;
  for (size_t lane = 1; lane < count_; ++lane) workers_.emplace_back([this, lane] { worker(lane); });
}

Lanes::~Lanes() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void Lanes::work(Loop& loop, size_t lane) {
  while (!loop.failed.load(std::memory_order_relaxed)) {
    const size_t i = loop.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= loop.tasks) break;
    Status s = (*loop.task)(lane, i);
    if (!s.is_ok()) {
      std::lock_guard<std::mutex> lock(*loop.mu);
      if (loop.first_error.is_ok()) loop.first_error = std::move(s);
      loop.failed.store(true, std::memory_order_relaxed);
    }
  }
}

void Lanes::worker(size_t lane) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    Loop* loop = nullptr;
    wake_.wait(lock, [&] {
      if (stopping_) return true;
      for (Loop* l : loops_)
        if (l->has_unclaimed()) return (loop = l) != nullptr;
      return false;
    });
    if (stopping_) return;
    ++loop->workers_inside;  // run() keeps the loop alive until this drops to 0
    lock.unlock();
    work(*loop, lane);
    lock.lock();
    if (--loop->workers_inside == 0) idle_.notify_all();
  }
}

Status Lanes::run(size_t tasks, const std::function<Status(size_t, size_t)>& task) {
  if (tasks == 0) return Status::ok();
  if (count_ == 1 || tasks == 1) {
    for (size_t i = 0; i < tasks; ++i) ZREC_RETURN_IF_ERROR(task(0, i));
    return Status::ok();
  }
  Loop loop;
  loop.task = &task;
  loop.tasks = tasks;
  loop.mu = &mu_;
  std::list<Loop*>::iterator self;
  {
    std::lock_guard<std::mutex> lock(mu_);
    self = loops_.insert(loops_.end(), &loop);
  }
  wake_.notify_all();
  work(loop, 0);
  std::unique_lock<std::mutex> lock(mu_);
  loops_.erase(self);  // no worker enters it from here on
  idle_.wait(lock, [&] { return loop.workers_inside == 0; });
  return std::move(loop.first_error);
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

size_t read_lane_budget(size_t requested) {
  if (requested > 0) return requested;
  return std::max({size_t{1}, available_physical_cores(), available_cpus() * 3 / 4});
}

size_t write_lane_budget(size_t requested) {
  if (requested > 0) return requested;
  return std::max<size_t>(1, available_cpus() * 3 / 4);
}

}  // namespace zrec
