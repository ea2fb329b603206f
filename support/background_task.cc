// A job on a background thread (background_task.h).
#include "zrec_support/background_task.h"

#include <exception>
#include <string>
#include <utility>

#include "zrec/lanes.h"

namespace zrec {

void BackgroundTask::start(std::function<Status()> job) {
  (void)wait();
  thread_ = start_background_thread([this, job = std::move(job)] {
    try {
      status_ = job();
    } catch (const std::exception& e) {
      status_ = Status(StatusCode::kIoError, std::string("background task failed: ") + e.what());
    }
  });
}

Status BackgroundTask::wait() {
  if (!thread_.joinable()) return Status::ok();
  thread_.join();
  return std::exchange(status_, Status::ok());
}

}  // namespace zrec
