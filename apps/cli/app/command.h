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
  // How stores given as URLs are read (zrec/remote.h): --cacert, and SIGINT/SIGTERM stop
  // a transfer. Every open, probe and marker read of a command passes it.
  RemoteOptions remote;

  // The executor for `work`, handed to every store, writer and check that does it: made
  // on the first call for that work with --threads lanes, or else the budget of `work`;
  // later calls for the same work return the same one. Reads and writes share one
  // executor whenever their budgets are equal (always with --threads), so a command
  // that states one Work, as each does once, has one executor.
  std::shared_ptr<Lanes> lanes(Work work) const;
  // The executor for reading `store`: read_lane_count(store, --threads) lanes
  // (zrec/remote.h: a URL without --threads gets more, as many requests in flight,
  // whatever the CPUs); lanes(Work::kRead) whenever the counts agree.
  std::shared_ptr<Lanes> read_lanes(const std::string& store) const;

  // How a store's lock is waited for: --wait, ended by SIGINT/SIGTERM (interrupt.h),
  // given up at --wait=SECONDS's deadline, and failed at once when the holder is the
  // process at the other end of our pipe (pipe_deadlock.h).
  LockWait lock_wait() const;
  // --wait=SECONDS (run_cli sets them): the command's start plus SECONDS, and the
  // message's "SECONDS s (--wait=SECONDS)"; nullopt: --wait alone, no deadline.
  std::optional<std::chrono::steady_clock::time_point> wait_deadline;
  std::string wait_timeout_text;

 private:
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
