// Running the command the line named, once it is parsed: its stdout checked, its
// logging set, its Status turned into one line on stderr and an exit code.
#pragma once

#include "cli/app/command.h"

namespace zrec::cli {

// Runs `command` (parsed) with `global` (filled) and returns the process's exit code.
int run_command(const Command& command, const GlobalOptions& global);

}  // namespace zrec::cli
