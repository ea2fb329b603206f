// How a caller stops and watches a long operation, one way for all of them: one
// Control in the operation's options, named `control` (DigestOptions, VerifyOptions,
// TransferOptions, JoinOptions, io::LockWait; the benchmark's RunOptions and
// StoreBenchOptions), or a constructor argument where there are no options
// (io::InputStream). The caller's thread runs the operation; a signal handler (or
// another thread) sets the cancel token's flag, and the operation ends at its next
// check with kCancelled "interrupted", having changed nothing it promised not to; the
// progress sink hears the counts done so far from the operation's own thread.
//
//   std::atomic<int> stop{0};
//   DigestOptions options;
//   options.control.cancel = {&stop, -1};
//   options.control.progress = [&](const Progress& p) { meter.update(p.records, p.bytes); };
//   auto digest = digest_store(store, options);  // kCancelled once stop != 0
//
// Progress holds counts and nothing else. An operation with more to say keeps it out
// of the sink: one that runs in passes names the pass in `phase` (verify: "table",
// then "records"; the benchmark: each phase, with no counts), and one with richer
// totals returns them as its result (transfer's and join's stats), which the caller
// reads once the run ends.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "zrec/cancel.h"
#include "zrec/status.h"

namespace zrec {

// Where an operation stands: what it has done so far, and its totals (0: unknown).
struct Progress {
  uint64_t records = 0;  // records done (in this phase)
  // The bytes behind them: logical bytes (Ragged: the shape prefix included), except
  // where the operation's options say otherwise (verify: stored bytes read).
  uint64_t bytes = 0;
  uint64_t total_records = 0;
  uint64_t total_bytes = 0;
  // The pass the counts belong to, for an operation that runs in several (verify's
  // "table" and "records", the benchmark's phases); null for one that runs in one.
  // Valid during the call only.
  const char* phase = nullptr;
};

struct Control {
  io::CancelToken cancel;  // flag set: stop; none: never stops
  // Optional; cheap calls, often. The initializer lets callers write `{.cancel = token}`
  // without g++ 12's -Wmissing-field-initializers (an error in CI's -Werror build).
  std::function<void(const Progress&)> progress = nullptr;

  bool cancelled() const { return cancel.flag != nullptr && cancel.flag->load(std::memory_order_relaxed) != 0; }
  // kCancelled "interrupted" once cancelled, else ok: the check an operation makes
  // between records.
  Status check() const { return cancelled() ? Status(StatusCode::kCancelled, "interrupted") : Status::ok(); }
  void report(const Progress& p) const {
    if (progress) progress(p);
  }
};

}  // namespace zrec
