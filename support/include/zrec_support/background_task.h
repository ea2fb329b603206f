// A job on a background thread, for tools built on the library (the CLI's
// append-files reads its next batch of files while the last one is appended; the
// append window writes one batch while the next is read).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "zrec/status.h"

namespace zrec {

// One Status-returning job at a time on a background thread (start_background_thread):
// the other half of a double-buffered loop, which fills or drains one buffer while the
// caller handles the other. An exception the job throws becomes its kIoError Status.
//
//   BackgroundTask ahead;
//   ahead.start([&] { return fill(next); });
//   ZREC_RETURN_IF_ERROR(handle(current));
//   ZREC_RETURN_IF_ERROR(ahead.wait());
//
// Performance note: the thread is made by the first start() and kept until the task
// is destroyed, so a loop that starts a job per batch of a few hundred microseconds
// does not pay a thread's creation and exit for each (and tools that trace the calls
// of each thread, such as strace's per-thread fault injection, see one thread).
//
// start(), wait() and started() are for one owning thread; the job runs on the
// background thread, and what it wrote is visible to the owner once wait() returned.
class BackgroundTask {
 public:
  BackgroundTask() = default;
  ~BackgroundTask();  // waits for a job started, then ends the thread
  BackgroundTask(const BackgroundTask&) = delete;
  BackgroundTask& operator=(const BackgroundTask&) = delete;

  // Starts `job`; a job already started is waited for first (its Status dropped).
  void start(std::function<Status()> job);
  // True from start() until wait() has returned.
  bool started() const { return started_; }
  // Waits for the job and returns its Status; OK when none was started.
  Status wait();

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable cv_;   // a job was given, a job ended, or stop
  std::function<Status()> job_;  // guarded by mu_: the job given and not yet taken
  bool busy_ = false;            // guarded by mu_: a job was given and has not ended
  bool stopping_ = false;        // guarded by mu_
  Status status_;                // guarded by mu_: the last job's
  bool started_ = false;         // the owner's: start() called, wait() not yet
  std::thread thread_;           // made by the first start()
};

}  // namespace zrec
