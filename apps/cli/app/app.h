// The zrec command line: global flags, subcommand registration, exit codes.
#pragma once

#include <span>

#include "zrec/status.h"

#include "cli/app/command.h"

namespace zrec::cli {

// Exit codes (man/zrec.1): 0 success; 1 the operation failed (I/O, malformed store,
// bad input data, verify found problems); 2 usage error; 75 a store is busy with
// another process (EX_TEMPFAIL: try again, or pass --wait); 130/143 interrupted.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitBusy = 75;

// The exit code of a command's Status where the command has no codes of its own.
int exit_code_for(const Status& s);

// Parses argv, runs one subcommand of `table` (the command table, cli/commands.h:
// all_commands()), prints diagnostics to stderr, returns the exit code.
int run_cli(int argc, char** argv, std::span<const CommandEntry> table);

}  // namespace zrec::cli
