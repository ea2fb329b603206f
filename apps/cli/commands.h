// The command table: every subcommand registers itself on the root app through one
// function here; all_commands() lists them for run_cli (app/app.h), which main passes. Each lives in its own
// cmd_<name>.cc with an options struct, the CLI11 bindings and a run function returning a Status (CONTRIBUTING.md, "CLI
// conventions").
#pragma once

#include <span>

#include "cli/app/command.h"
#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

Command register_create(CLI::App& root, const GlobalOptions& global);
Command register_append_npy(CLI::App& root, const GlobalOptions& global);
Command register_append_files(CLI::App& root, const GlobalOptions& global);
Command register_append_stream(CLI::App& root, const GlobalOptions& global);
Command register_append_tar(CLI::App& root, const GlobalOptions& global);
Command register_append_lmdb(CLI::App& root, const GlobalOptions& global);
Command register_append_h5(CLI::App& root, const GlobalOptions& global);
Command register_adopt(CLI::App& root, const GlobalOptions& global);
Command register_card(CLI::App& root, const GlobalOptions& global);
Command register_cat(CLI::App& root, const GlobalOptions& global);
Command register_info(CLI::App& root, const GlobalOptions& global);
Command register_train_dict(CLI::App& root, const GlobalOptions& global);
Command register_recompress(CLI::App& root, const GlobalOptions& global);
Command register_concat(CLI::App& root, const GlobalOptions& global);
Command register_digest(CLI::App& root, const GlobalOptions& global);
Command register_diff(CLI::App& root, const GlobalOptions& global);
Command register_duplicates(CLI::App& root, const GlobalOptions& global);
Command register_split(CLI::App& root, const GlobalOptions& global);
Command register_verify(CLI::App& root, const GlobalOptions& global);
Command register_sync(CLI::App& root, const GlobalOptions& global);
Command register_bench(CLI::App& root, const GlobalOptions& global);
Command register_view(CLI::App& root, const GlobalOptions& global);  // view/cmd_view.cc
// Hidden: prints the bash or zsh completion script generated from `root` (cmd_completion.cc).
Command register_completion(CLI::App& root, const GlobalOptions& global);

// Every subcommand, in the order `zrec --help` lists them.
std::span<const CommandEntry> all_commands();

}  // namespace zrec::cli
