// What an operation runs within, besides its own knobs: how a caller stops and watches
// it (Control: a CancelToken and a progress sink), how it waits for a store's lock that
// another process holds (LockWait), and where its warnings go (WarningSink). Each is a
// value in the options of the calls that use it, as LevelDB's Env rides in its Options:
// nothing about cancelling, waiting or warning is process-wide.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "zrec/status.h"

namespace zrec {

// --- Cancelling ----------------------------------------------------------------------

// What stops a blocking wait in the library (a read from a pipe, a LockWait for a store's
// lock): a flag a signal handler sets, and a descriptor the handler makes readable.
// Waits sleep in poll(2) on their descriptor and wake_fd together (the self-pipe
// trick), so a signal that lands after the flag was checked, just before the wait
// would block, still wakes it. Either being set means cancelled.
//
//   std::atomic<int> flag;  // set by the handler, which also writes a byte to pipe[1]
//   options.control.cancel = {&flag, pipe[0]};
struct CancelToken {
  const std::atomic<int>* flag = nullptr;  // non-zero: cancelled
  int wake_fd = -1;                        // readable: cancelled; -1: none
};

// --- Stopping and watching a long operation ---------------------------------------
//
// One way for all of them: one Control in the operation's options, named `control`
// (DigestOptions, VerifyOptions, TransferOptions, JoinOptions, LockWait; the benchmark's
// RunOptions and StoreBenchOptions), or a constructor argument where there are no
// options (the tools' io::InputStream). The caller's thread runs the operation; a signal
// handler (or another thread) sets the cancel token's flag, and the operation ends at
// its next check with kCancelled "interrupted", having changed nothing it promised not
// to; the progress sink hears the counts done so far from the operation's own thread.
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
  CancelToken cancel;  // flag set: stop; none: never stops
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

// --- Waiting for a store's lock ----------------------------------------------------
//
// How an operation waits for a store's lock that another process holds (the `wait` of
// OpenOptions (VerifyOptions::open), WriterOptions, JoinOptions and of the calls that lock a
// store): whether it waits at all, what ends the wait early, when it gives up, and what
// proves it can never end.
//
//   zrec::OpenOptions o;
//   o.wait = true;                                  // block until the holder lets go
//   o.wait.control.cancel = {&sigint_flag, wake_pipe[0]};  // ... or until a signal arrives
//   o.wait.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);  // ... or 30 s

// Asked about every 100 ms while a cancellable wait lasts, with the descriptor of the
// store's meta.zr (open, its lock held by another) and the store's path: a non-empty
// answer (why the wait can never end, e.g. the holder is the process that feeds our
// stdin) fails the wait with kBusy and that message.
using LockWaitProbe = std::function<std::string(int meta_fd, const std::string& store_path)>;

struct LockWait {
  LockWait(bool block = false) : block(block) {}  // implicit: `options.wait = true`

  // False: a held lock fails at once with kBusy. True: wait for the holder.
  bool block = false;
  // The wait's own Control: its cancel token ends the wait early (kCancelled); a
  // default token (none): a plain blocking wait. A wait reports no progress. A signal
  // handler that only sets a flag cannot end a flock(2) that retries EINTR, nor one
  // entered just after the flag was checked, so a cancellable wait polls: LOCK_NB
  // tries, between which it sleeps in poll(2) on the token's wake descriptor (a signal
  // wakes it at once). A cancelled wait fails within a fraction of a second. The
  // operation that waits may have a Control of its own (a verify's); a caller may give both
  // the same token.
  Control control;
  // Empty: none. Asked only while a cancellable wait lasts (control.cancel set).
  LockWaitProbe probe;
  // When the wait gives up: once this time has passed, a lock still held fails with
  // kBusy "store 'S' is still locked by another process after " + timeout_text (a caller
  // that waits at most SECONDS sets the deadline to its start plus SECONDS, and says so here).
  // A wait with a deadline polls as a cancellable one does. nullopt: no deadline.
  std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt;
  std::string timeout_text = "its deadline";

  explicit operator bool() const { return block; }
};

// --- Warnings ----------------------------------------------------------------------
//
// Things worth saying that are not failures (a leftover temporary left in place because
// it is not provably zrec's). Where they go is a field of the options of the calls that
// may give them (CreateOptions::warn, JoinOptions::warn, save_dictionary_file's `warn`).

// Receives one warning, without a prefix or a newline. Empty: the warning goes to
// stderr as "zrec: warning: MESSAGE".
using WarningSink = std::function<void(const std::string& message)>;

}  // namespace zrec
