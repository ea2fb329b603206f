// VerifyJobs (see verify_jobs.h).
#include "cli/view/verify_jobs.h"

#include <algorithm>

#include "zrec/remote.h"

namespace zrec::cli::view {

VerifyJobs::~VerifyJobs() {
  cancel_ = 1;
  if (runner_.joinable()) runner_.join();
}

Result<uint64_t> VerifyJobs::start(const std::string& dir, size_t path, size_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!jobs_.empty() && !jobs_.back()->finished)
    return Status(StatusCode::kBusy, "a verify is running already (job " + std::to_string(jobs_.back()->number) + ")");
  if (runner_.joinable()) runner_.join();  // finished: its thread is ending
  auto job = std::make_shared<Job>();
  job->number = next_++;
  job->path = path;
  job->stream = stream;
  jobs_.push_back(job);
  if (jobs_.size() > kKeptJobs) jobs_.erase(jobs_.begin());
  runner_ = start_background_thread([this, job, dir] {
    VerifyOptions options;
    Context ctx{.lanes = lanes_, .remote = remote_};
    options.max_errors = 0;  // count every problem; keep the first kKeptProblems
    options.keep_problems = kKeptProblems;
    ctx.control.cancel = {&cancel_, -1};
    ctx.control.progress = [&](const Progress& p) {
      std::lock_guard<std::mutex> lock(mutex_);
      job->phase = p.phase;
      job->done = p.records;
      job->total = p.total_records;
      job->bytes = p.bytes;
    };
    options.on_problem = [&](const VerifyProblem& p) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (job->problems.size() < kKeptProblems) job->problems.push_back(p);
      ++job->problem_count;
      return Status::ok();
    };
    Result<VerifyReport> report = verify_store(dir, options, ctx);
    std::lock_guard<std::mutex> lock(mutex_);
    if (report.is_ok()) job->report = std::move(*report);
    else job->error = redact_urls_in(report.status().message());
    job->finished = true;
  });
  return job->number;
}

Status VerifyJobs::write_status(JsonWriter& j, uint64_t number) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find_if(jobs_.begin(), jobs_.end(), [&](const auto& job) { return job->number == number; });
  if (it == jobs_.end()) return not_found("no verify job " + std::to_string(number));
  const Job& job = **it;
  j.begin_object().key("job").value(job.number).key("path").value(uint64_t{job.path});
  j.key("stream").value(uint64_t{job.stream}).key("phase").value(job.phase).key("done").value(job.done);
  j.key("total").value(job.total).key("bytes").value(job.bytes).key("finished").value(job.finished);
  if (job.finished && job.error.empty()) {
    j.key("valid").value(job.report.valid()).key("problem_count").value(job.report.problem_count);
    j.key("records_decoded").value(job.report.records_decoded);
    j.key("notes").begin_array();
    for (const std::string& n : job.report.notes) j.value(n);
    j.end_array();
  } else if (job.finished) {
    j.key("error").value(job.error);
  }
  j.key("problems").begin_array();
  for (const VerifyProblem& p : job.problems) {
    j.begin_object().key("rule").value(p.rule).key("message").value(redact_urls_in(p.message));
    j.key("id");
    if (p.id) j.value(*p.id);
    else j.null();
    j.key("shard");
    if (p.shard) j.value(uint64_t{*p.shard});
    else j.null();
    j.key("offset");
    if (p.offset) j.value(*p.offset);
    else j.null();
    j.end_object();
  }
  j.end_array().end_object();
  return Status::ok();
}

}  // namespace zrec::cli::view
