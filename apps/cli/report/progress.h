// The progress meter of long commands, in one place (CONTRIBUTING.md, "Progress only on a
// TTY"): one line on stderr with records, bytes, rates and, when the total is known,
// the percentage and an ETA. It is redrawn in place (\r) at most about 6 times a
// second by a small thread of its own, so a command blocked on a slow pipe still shows
// time passing, and the hot loop only stores two counters. The line is cleared when
// the meter finishes, so the summary line and errors start on a clean line.
//
// Debian packages no C++ progress-bar library (indicators, progressbar and the like
// are not in the archive), so this stays small and local.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "cli/report/byte_size.h"  // format_bytes, for the meter and the summaries
#include "cli/report/output_prefs.h"

namespace zrec::cli {

class ProgressMeter {
 public:
  // Whether a command run with `g` shows progress: when stderr is a terminal or
  // --progress is given, unless --no-progress or -q is.
  static bool wanted(const OutputPrefs& g);

  // `label` starts the line (the command name, e.g. "append-files"). The meter draws
  // only if wanted(g); otherwise every call is a cheap no-op.
  ProgressMeter(const OutputPrefs& g, std::string label);
  ~ProgressMeter();  // finish()
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;

  bool enabled() const { return enabled_; }

  // Known totals turn on the percentage and ETA (records preferred over bytes).
  // 0 means unknown.
  void set_total_records(uint64_t n) { total_records_.store(n, std::memory_order_relaxed); }
  void set_total_bytes(uint64_t n) { total_bytes_.store(n, std::memory_order_relaxed); }

  // Reports progress so far (absolute counts). Thread-safe; a relaxed store each.
  void update(uint64_t records, uint64_t bytes) {
    records_.store(records, std::memory_order_relaxed);
    bytes_.store(bytes, std::memory_order_relaxed);
  }

  // Runs `print` (which writes whole lines to stderr, e.g. a warning) with the meter's
  // line cleared, so the text never lands in the middle of it.
  void print_above(const std::function<void()>& print);

  // Stops redrawing and clears the line. Idempotent.
  void finish();

 private:
  void loop();
  void draw_locked();  // requires mu_

  const bool enabled_;
  const std::string label_;
  const std::chrono::steady_clock::time_point started_;
  std::atomic<uint64_t> records_{0}, bytes_{0}, total_records_{0}, total_bytes_{0};

  std::mutex mu_;  // guards stopping_, drawn_ and writes to stderr by the meter
  std::condition_variable cv_;
  bool stopping_ = false;
  bool drawn_ = false;  // a line is on screen and must be cleared
  std::thread thread_;
};

}  // namespace zrec::cli
