// What a subcommand is to the app: the global options it reads (GlobalOptions) and what
// its register function returns (Command). The table of those functions is
// cli/commands.h, which main hands to run_cli; a command file (cmd_<name>.cc, at the CLI's
// root or in the floor of its kind) includes this (CONTRIBUTING.md, "CLI conventions").
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "zrec/context.h"
#include "zrec/lanes.h"
#include "zrec/remote.h"
#include "zrec/status.h"

#include "cli/options/cli11_fwd.h"
#include "cli/report/output_prefs.h"

namespace zrec::cli {

// What a command mostly does, which picks its default lane budget (docs/format.md §9).
enum class Work { kRead, kWrite };

// Flags shared by every subcommand; how loud it is on stderr (-q, -v, --progress,
// --no-progress) is the OutputPrefs that report/ reads.
struct GlobalOptions : OutputPrefs {
  size_t threads = 0;  // --threads / ZREC_THREADS; 0: the docs/format.md §9 budget
  bool wait = false;   // --wait: block on a locked store instead of failing
  // How stores given as URLs are read (zrec/remote.h): --cacert, --remote-timeout, the
  // S3 options and this command's RemoteCounters (stats). Operations get it in their
  // Context (below), whose cancel token stops their transfers.
  RemoteOptions remote;
  // --wait=SECONDS (run_cli sets them): the command's start plus SECONDS, and the
  // message's "SECONDS s (--wait=SECONDS)"; nullopt: --wait alone, no deadline.
  std::optional<std::chrono::steady_clock::time_point> wait_deadline;
  std::string wait_timeout_text;

  // The Context (zrec/context.h) a command hands every library operation that does
  // `work`, built from these options here (app/app.cc) and nowhere else:
  // - lanes: the executor for `work`, made on the first call for that work with
  //   --threads lanes, or else the budget of `work`; later calls for the same work get
  //   the same one. Reads and writes share one executor whenever their budgets are equal
  //   (always with --threads), so a command that states one Work, as each does once,
  //   has one executor;
  // - wait: --wait, given up at --wait=SECONDS's deadline, and failed at once when the
  //   holder is the process at the other end of our pipe (os/pipe_deadlock.h);
  // - control.cancel: SIGINT/SIGTERM (os/interrupt.h), which end lock waits, remote
  //   transfers and long operations while an InterruptScope lives; no progress sink;
  // - warn: the command's log (report/console.h, log_core_warning);
  // - remote: `remote` above, with the command's RemoteCounters.
  // snapshot_if_busy is false: a command that only inspects sets it.
  Context context(Work work) const;
  // The same for reading `store`: read_lane_count(store, --threads) lanes (zrec/remote.h:
  // a URL without --threads gets more, as many requests in flight, whatever the CPUs),
  // context(Work::kRead)'s whenever the counts agree.
  Context read_context(const std::string& store) const;
  // The same without an executor, for the tool's own transfers (sync's uploads and file
  // copies), which bring their own threads, and for work that needs only its
  // control (a file list read, diff's walk beside the sides' own executors).
  Context transfer_context() const;

 private:
  std::shared_ptr<Lanes> executor(Work work) const;
  Context context_on(std::shared_ptr<Lanes> lanes) const;
  mutable std::shared_ptr<Lanes> lanes_[2];  // by Work
  mutable std::shared_ptr<Lanes> remote_lanes_;
};

struct Command {
  CLI::App* app = nullptr;
  std::function<Status()> run;
  // Optional: the exit code for run()'s Status, where a command's codes differ from
  // app.cc's default (verify: 2 when the store could not be checked).
  std::function<int(const Status&)> exit_code = nullptr;
  // Optional: true when the command's data goes to stdout (cat, digest and train-dict
  // without -o FILE; info, verify, bench). Such a command, and any given --json, fails
  // before its work (exit 1, one line) when stdout was closed at start (console.h).
  std::function<bool()> writes_stdout = nullptr;
};

// A row of the command table: a subcommand's name and its register function.
struct CommandEntry {
  const char* name;
  Command (*add)(CLI::App& root, const GlobalOptions& global);
};

}  // namespace zrec::cli
