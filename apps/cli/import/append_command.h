// The frame every append-* command of one store (or root) is registered in: the STORE
// operand first, then the command's own options, then the options every append takes
// (append_session.h), in that order in --help; and the Command that runs it. Written
// once, so a new append command gets the same operand, the same options and the same
// order (append-tar, whose first operand is a root or an output, has a frame of its own).
//
// Example:
//   constexpr AppendCommandForm kAppendNpy{.name = "append-npy", .about = "Append the arrays of .npy files ...",
//                                          .store = "Store (or, with --stream, root) to append to"};
//   void add_npy_options(CLI::App* cmd, AppendNpyArgs& a);  // --stream, --split-axis0, ...
//   return register_append(root, global, kAppendNpy, add_npy_options, run_append_npy);
#pragma once

#include <memory>
#include <string>

#include "cli/app/command.h"
#include "cli/import/append_session.h"
#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

struct AppendCommandForm {
  const char* name = "";   // "append-npy"
  const char* about = "";  // the one line `zrec --help` lists it with
  const char* store = "";  // the STORE operand's description
  // --check-present/--no-check-present: whether the command compares the records a
  // rerun finds present (AppendSession::compares_skipped).
  bool check_present = true;
};

// The subcommand `form` describes, on `root`, with its required STORE operand bound to `store`.
CLI::App* add_append_command(CLI::App& root, const AppendCommandForm& form, std::string& store);

// The options every append takes, after the command's own: add_append_options, and
// add_check_present_options where `form` says so.
void add_common_append_options(CLI::App* cmd, AppendArgs& args, const AppendCommandForm& form);

// Registers the command: Args holds `store` and `append` (AppendArgs); add_own(cmd, args)
// binds the command's own options; run(args, global) runs it.
template <typename Args, typename Run>
Command register_append(CLI::App& root, const GlobalOptions& global, const AppendCommandForm& form,
                        void (*add_own)(CLI::App* cmd, Args& args), Run run) {
  auto args = std::make_shared<Args>();
  CLI::App* cmd = add_append_command(root, form, args->store);
  add_own(cmd, *args);
  add_common_append_options(cmd, args->append, form);
  return Command{cmd, [args, &global, run]() { return run(*args, global); }, nullptr};
}

}  // namespace zrec::cli
