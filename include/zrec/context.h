// What an operation runs within, besides its own knobs, in one value: Context. The lanes
// it runs on, how it waits for a store's lock that another process holds (LockWait),
// what stops and watches it (Control: a CancelToken and a progress sink), where its
// warnings go (WarningSink), how it reads stores given as URLs (RemoteOptions) and where
// it counts what those reads cost. Every operation of the library takes one as
// `const Context&`, as Arrow's reads take one IOContext and git's builtins one
// repository; its options keep only its own knobs. Nothing about cancelling, waiting or
// warning is process-wide.
//
//   std::atomic<int> stop{0};
//   auto counts = std::make_shared<zrec::RemoteCounters>();
//   zrec::Context ctx{.lanes = std::make_shared<zrec::Lanes>(zrec::read_lane_budget()),
//                     .wait = true, .control = {.cancel = {&stop, -1}},
//                     .remote = {.stats = counts}};
//   ZREC_ASSIGN_OR_RETURN(auto store, zrec::Store::open("tokens/", {}, ctx));
//   ZREC_ASSIGN_OR_RETURN(auto digest, zrec::digest_store(*store, {}, ctx));
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "zrec/lanes.h"
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
//   ctx.control.cancel = {&flag, pipe[0]};
struct CancelToken {
  const std::atomic<int>* flag = nullptr;  // non-zero: cancelled
  int wake_fd = -1;                        // readable: cancelled; -1: none
};

// --- Stopping and watching a long operation ---------------------------------------
//
// One way for all of them: the Control of the operation's Context (Context::control),
// or a constructor argument where there is no Context (the tools' io::InputStream). Its
// token also ends the operation's lock waits and remote transfers. The caller's thread
// runs the operation; a signal handler (or another thread) sets the cancel token's flag,
// and the operation ends at its next check with kCancelled "interrupted", having changed nothing it promised not
// to; the progress sink hears the counts done so far from the operation's own thread.
//
//   std::atomic<int> stop{0};
//   zrec::Context ctx;
//   ctx.control.cancel = {&stop, -1};
//   ctx.control.progress = [&](const Progress& p) { meter.update(p.records, p.bytes); };
//   auto digest = digest_store(store, {}, ctx);  // kCancelled once stop != 0
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
// How an operation waits for a store's lock that another process holds (Context::wait):
// whether it waits at all, when it gives up, and what proves it can never end. What
// ends it early is the operation's own cancel token (Context::control.cancel).
//
//   zrec::Context ctx;
//   ctx.wait = true;                                      // block until the holder lets go
//   ctx.control.cancel = {&sigint_flag, wake_pipe[0]};    // ... or until a signal arrives
//   ctx.wait.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);  // ... or 30 s

// Asked about every 100 ms while a cancellable wait lasts, with the descriptor of the
// store's meta.zr (open, its lock held by another) and the store's path: a non-empty
// answer (why the wait can never end, e.g. the holder is the process that feeds our
// stdin) fails the wait with kBusy and that message.
using LockWaitProbe = std::function<std::string(int meta_fd, const std::string& store_path)>;

struct LockWait {
  LockWait(bool block = false) : block(block) {}  // implicit: `ctx.wait = true`

  // False: a held lock fails at once with kBusy. True: wait for the holder.
  // The Context's cancel token (control.cancel) ends the wait early (kCancelled); none: a
  // plain blocking wait. A signal handler that only sets a flag cannot end a flock(2)
  // that retries EINTR, nor one entered just after the flag was checked, so a
  // cancellable wait polls: LOCK_NB tries, between which it sleeps in poll(2) on the
  // token's wake descriptor (a signal wakes it at once). A cancelled wait fails within a
  // fraction of a second. A wait reports no progress.
  bool block = false;
  // Empty: none. Asked only while a cancellable wait lasts (the Context's cancel token set).
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
// it is not provably zrec's). Where they go is the operation's Context::warn.

// Receives one warning, without a prefix or a newline. Empty: the warning goes to
// stderr as "zrec: warning: MESSAGE".
using WarningSink = std::function<void(const std::string& message)>;

// --- Remote reading (zrec/remote.h) -----------------------------------------------

// How s3:// URLs are read. Empty fields come from the environment, as AWS's own tools and
// SDKs take them (docs/remote.md, "Buckets"): credentials from AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the profile (AWS_PROFILE, else
// "default") in AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE
// (~/.aws/config); the region from AWS_REGION, AWS_DEFAULT_REGION or the profile, else
// us-east-1; the endpoint from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's
// endpoint_url, else AWS's own (https://BUCKET.s3.REGION.amazonaws.com). A given
// endpoint is addressed path-style (ENDPOINT/BUCKET/KEY), as S3-compatible servers are.
struct S3Options {
  std::string endpoint_url;  // ENDPOINT, as https://HOST[:PORT]; empty: as above
  bool no_sign = false;      // unsigned requests (also AWS_NO_SIGN_REQUEST=true): anonymous, a public bucket
};

// What remote reads cost: requests sent (retries included), response body bytes received,
// and the requests that were retries of a failed one.
struct RemoteStats {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t retries = 0;
};

// The same counts as the reads happen (from any lane or read-ahead thread, so atomic).
// A caller hands one to the reads it wants counted together (RemoteOptions::stats: one
// operation's, one job's); nothing is counted for the whole process.
struct RemoteCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> retries{0};

  RemoteStats load() const {
    return {requests.load(std::memory_order_relaxed), bytes.load(std::memory_order_relaxed),
            retries.load(std::memory_order_relaxed)};
  }
};

struct RemoteOptions {
  std::string cacert;          // a CA bundle file (PEM) to verify servers by; empty: the system's
  int max_tries = 6;           // tries of one request before its error is reported
  int first_backoff_ms = 100;  // wait before the second try; doubled for each later one (capped at 5 s)
  int connect_timeout_s = 15;  // to connect (and finish TLS)
  int stall_timeout_s = 30;    // a transfer receiving nothing for this long is retried
  // Every request has a deadline, whatever arrives meanwhile (a server dripping a byte a
  // second never stalls): 2 * stall_timeout_s (connecting included), plus the bytes asked
  // at this rate. A request past it is retried as a timeout.
  uint64_t min_bytes_per_s = 64 << 10;
  uint64_t small_file_bytes = 1 << 20;  // a server that ignores Range is accepted for files up to this size
  int max_redirects = 5;                // followed by zrec; https is never redirected to http
  S3Options s3;
  // Where the reads made with these options count what they cost; null: not counted.
  // The reads of every file opened with them (a store's, a root's marker) count into it.
  std::shared_ptr<RemoteCounters> stats = nullptr;
};

// --- One operation's environment ---------------------------------------------------

// Everything an operation takes from its surroundings rather than from its own options,
// declared once. A program (the zrec tool, from its global options) fills one and hands
// it to each call; a default Context runs on lanes of the operation's own default
// budget, fails at once on a held lock, never stops, warns on stderr and reads URLs with
// the default remote settings.
struct Context {
  // The executor every part of the operation runs on (zrec/lanes.h); null: the
  // operation makes one of its default budget (read_lane_count() for a store it reads,
  // write_lane_budget() for one it writes).
  std::shared_ptr<Lanes> lanes = nullptr;
  // How a store's lock held by another process is waited for; default: not at all (kBusy).
  LockWait wait = {};
  // When a writer holds a store's lock (and not `wait`), a reader opens its last
  // published state without the lock instead of failing (for a caller that only
  // inspects it): the static page is read until two consecutive copies agree. Records
  // published then stay readable; records the writer publishes later are not seen.
  // Store::writer_active() (VerifyReport::writer_active) tells which happened.
  bool snapshot_if_busy = false;
  // What stops the operation (its lock waits and remote transfers too) and hears its
  // progress; default: never stops, hears nothing.
  Control control = {};
  // Where warnings go; empty: stderr.
  WarningSink warn = nullptr;
  // How stores, roots and files given as URLs are read, and where those reads count
  // what they cost (remote.stats).
  RemoteOptions remote = {};
};

}  // namespace zrec
