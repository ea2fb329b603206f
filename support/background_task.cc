// A job on a background thread (background_task.h).
#include "zrec_support/background_task.h"

#include <exception>
#include <string>
#include <utility>

#include "zrec/lanes.h"

namespace zrec {

BackgroundTask::~BackgroundTask() {
  (void)wait();  // never leaves a job running
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundTask::start(std::function<Status()> job) {
  (void)wait();
  if (!thread_.joinable()) thread_ = start_background_thread([this] { loop(); });
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = std::move(job);
    busy_ = true;
  }
  started_ = true;
  cv_.notify_all();
}

Status BackgroundTask::wait() {
  if (!started_) return Status::ok();
  started_ = false;
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !busy_; });
  return std::exchange(status_, Status::ok());
}

void BackgroundTask::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return job_ != nullptr || stopping_; });
    if (job_ == nullptr) return;  // stopping, and no job left
    std::function<Status()> job = std::exchange(job_, nullptr);
    lock.unlock();
    Status s;
    try {
      s = job();
    } catch (const std::exception& e) {
      s = Status(StatusCode::kIoError, std::string("background task failed: ") + e.what());
    }
    job = nullptr;  // what the job holds is released before the owner hears it ended
    lock.lock();
    status_ = std::move(s);
    busy_ = false;
    cv_.notify_all();
  }
}

}  // namespace zrec
