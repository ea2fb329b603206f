// How a caller stops and watches a long operation: one Control in the operation's
// options (DigestOptions::control). The caller's thread runs the operation; a signal
// handler (or another thread) sets the cancel token's flag, and the operation ends at
// its next check with kCancelled "interrupted", having changed nothing it promised not
// to; the progress sink hears the counts done so far from the operation's own thread.
//
//   std::atomic<int> stop{0};
//   DigestOptions options;
//   options.control.cancel = {&stop, -1};
//   options.control.progress = [&](const Progress& p) { meter.update(p.records, p.bytes); };
//   auto digest = digest_store(store, options);  // kCancelled once stop != 0
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "zrec/cancel.h"
#include "zrec/status.h"

namespace zrec {

// Where an operation stands: what it has done so far, and its totals (0: unknown).
struct Progress {
  uint64_t records = 0;  // records done
  uint64_t bytes = 0;    // their logical bytes (Ragged: the shape prefix included)
  uint64_t total_records = 0;
  uint64_t total_bytes = 0;
};

struct Control {
  io::CancelToken cancel;                         // flag set: stop; none: never stops
  std::function<void(const Progress&)> progress;  // optional; cheap calls, often

  bool cancelled() const { return cancel.flag != nullptr && cancel.flag->load(std::memory_order_relaxed) != 0; }
  // kCancelled "interrupted" once cancelled, else ok: the check an operation makes
  // between records.
  Status check() const { return cancelled() ? Status(StatusCode::kCancelled, "interrupted") : Status::ok(); }
  void report(const Progress& p) const {
    if (progress) progress(p);
  }
};

}  // namespace zrec
