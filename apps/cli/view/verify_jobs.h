// `zrec view`'s verify button: verify_store (include/zrec/verify.h, what `zrec verify`
// runs) on a background thread, its progress and the problems it finds kept for the page
// to poll. One verify runs at a time (a second is refused while it does); the last
// kKeptJobs finished ones stay readable; at most kKeptProblems problems are kept per job
// (problem_count counts them all). Destroying VerifyJobs cancels a running verify and
// waits for it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "zrec/context.h"
#include "zrec/lanes.h"
#include "zrec/status.h"
#include "zrec/verify.h"

#include "cli/report/json.h"

namespace zrec::cli::view {

class VerifyJobs {
 public:
  static constexpr size_t kKeptJobs = 16;
  static constexpr uint64_t kKeptProblems = 1000;

  // Each job verifies in `ctx`'s lanes and remote settings, without waiting for a lock,
  // stopped by its own cancel flag.
  explicit VerifyJobs(const Context& ctx) : lanes_(ctx.lanes), remote_(ctx.remote) {}
  ~VerifyJobs();

  // Starts verifying the store at `dir` (PATH `path`, stream `stream` of the view);
  // returns the job's number. kBusy while another verify runs.
  Result<uint64_t> start(const std::string& dir, size_t path, size_t stream);

  // Writes the job object: "job", "path", "stream", "phase" ("table" | "records"),
  // "done", "total", "bytes", "finished", and once finished "valid", "problem_count",
  // "records_decoded", "notes", or "error" when the store could not be checked; always
  // "problems": [{"rule", "message", "id", "shard", "offset"}]. kNotFound for an unknown job.
  Status write_status(JsonWriter& j, uint64_t job);

 private:
  struct Job {
    uint64_t number = 0;
    size_t path = 0, stream = 0;
    std::string phase = "table";
    uint64_t done = 0, total = 0, bytes = 0;
    bool finished = false;
    std::string error;
    VerifyReport report;
    std::vector<VerifyProblem> problems;
    uint64_t problem_count = 0;
  };
  std::shared_ptr<Lanes> lanes_;
  RemoteOptions remote_;
  std::mutex mutex_;  // guards jobs_, next_ and every Job's fields
  std::vector<std::shared_ptr<Job>> jobs_;
  uint64_t next_ = 1;
  std::atomic<int> cancel_{0};  // non-zero: stop the running verify (its Control's flag)
  std::thread runner_;
};

}  // namespace zrec::cli::view
