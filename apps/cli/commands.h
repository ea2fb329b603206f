// Every subcommand registers itself on the root app through one function here.
// Each lives in its own cmd_<name>.cc with an options struct, the CLI11 bindings and a
// run function returning a Status (CONTRIBUTING.md, "CLI conventions").
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "zrec/lanes.h"
#include "zrec/lock_wait.h"
#include "zrec/status.h"

// CLI11 is included only by the .cc files that register options, parse or format help:
// its header costs seconds of compiling per file, so headers declare what they name.
namespace CLI {
class App;
}  // namespace CLI

namespace zrec::cli {

// What a command mostly does, which picks its default lane budget (docs/format.md §9).
enum class Work { kRead, kWrite };

// Flags shared by every subcommand.
struct GlobalOptions {
  size_t threads = 0;        // --threads / ZREC_THREADS; 0: the docs/format.md §9 budget
  int verbosity = 0;         // -q: -1, -v: 1, -vv: 2
  bool wait = false;         // --wait: block on a locked store instead of failing
  bool progress = false;     // --progress: force the progress meter
  bool no_progress = false;  // --no-progress

  // The executor for `work`, handed to every store, writer and check that does it: made
  // on the first call for that work with --threads lanes, or else the budget of `work`;
  // later calls for the same work return the same one. Reads and writes share one
  // executor whenever their budgets are equal (always with --threads), so a command
  // that states one Work, as each does once, has one executor.
  std::shared_ptr<Lanes> lanes(Work work) const;

  // How a store's lock is waited for: --wait, ended by SIGINT/SIGTERM (interrupt.h) and
  // failed at once when the holder is the process at the other end of our pipe
  // (pipe_deadlock.h).
  io::LockWait lock_wait() const;
  // The probe lock_wait() hands on (run_cli sets it: pipe_deadlock, then --wait=SECONDS's
  // deadline); empty: pipe_deadlock alone.
  io::LockWaitProbe wait_probe;

 private:
  mutable std::shared_ptr<Lanes> lanes_[2];  // by Work
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

Command register_create(CLI::App& root, const GlobalOptions& global);
Command register_append_npy(CLI::App& root, const GlobalOptions& global);
Command register_append_files(CLI::App& root, const GlobalOptions& global);
Command register_append_stream(CLI::App& root, const GlobalOptions& global);
Command register_append_tar(CLI::App& root, const GlobalOptions& global);
Command register_append_lmdb(CLI::App& root, const GlobalOptions& global);
Command register_append_h5(CLI::App& root, const GlobalOptions& global);
Command register_cat(CLI::App& root, const GlobalOptions& global);
Command register_info(CLI::App& root, const GlobalOptions& global);
Command register_train_dict(CLI::App& root, const GlobalOptions& global);
Command register_recompress(CLI::App& root, const GlobalOptions& global);
Command register_concat(CLI::App& root, const GlobalOptions& global);
Command register_digest(CLI::App& root, const GlobalOptions& global);
Command register_verify(CLI::App& root, const GlobalOptions& global);
Command register_bench(CLI::App& root, const GlobalOptions& global);
Command register_view(CLI::App& root, const GlobalOptions& global);  // view/cmd_view.cc
// Hidden: prints the bash or zsh completion script generated from `root` (cmd_completion.cc).
Command register_completion(CLI::App& root, const GlobalOptions& global);

}  // namespace zrec::cli
