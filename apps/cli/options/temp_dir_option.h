// --temp-dir DIR, defined once for the commands that sort on disk (diff --by-key,
// duplicates): where their ScratchDir (diff/entry_sort.h) is made, and the default it
// falls back to when none is given, said in the same words as that class does it.
//
// Example:
//   add_temp_dir_option(cmd, args->temp_dir, "Where the sort spills its runs");
//   // --help: "--temp-dir DIR  Where the sort spills its runs (default: $TMPDIR or /tmp)"
#pragma once

#include <string>

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// Adds "--temp-dir DIR" to `cmd`, bound to `dir` (empty when not given), described as
// "WHAT (default: $TMPDIR or /tmp)".
CLI::Option* add_temp_dir_option(CLI::App* cmd, std::string& dir, const std::string& what);

}  // namespace zrec::cli
