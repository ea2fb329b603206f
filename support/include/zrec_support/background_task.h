// A job on a background thread, for tools built on the library (the CLI's
// append-files reads its next batch of files while the last one is appended).
#pragma once

#include <functional>
#include <thread>

#include "zrec/status.h"

namespace zrec {

// One Status-returning job on a background thread (start_background_thread): the
// read-ahead of a double-buffered loop, which fills the next buffer while the caller
// handles this one. An exception the job throws becomes its kIoError Status.
//
//   BackgroundTask ahead;
//   ahead.start([&] { return fill(next); });
//   ZREC_RETURN_IF_ERROR(handle(current));
//   ZREC_RETURN_IF_ERROR(ahead.wait());
class BackgroundTask {
 public:
  BackgroundTask() = default;
  ~BackgroundTask() { (void)wait(); }  // never leaves a job running
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;

  // Starts `job`; a job already started is waited for first.
  void start(std::function<Status()> job);
  // True from start() until wait() has returned.
  bool started() const { return thread_.joinable(); }
  // Waits for the job and returns its Status; OK when none was started.
  Status wait();

 private:
  std::thread thread_;
  Status status_;
};

}  // namespace zrec
