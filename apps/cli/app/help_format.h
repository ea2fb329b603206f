// How every `--help` reads: the one CLI11 formatter of zrec, set on the root before the
// subcommands are added (they inherit it).
//
//   CLI::App app{"..."};
//   use_help_format(app);
//   app.add_subcommand(...);
//
// Compared with CLI11's default it writes
//   - a value placeholder instead of the parser's type: "--threads N", "-o,--output FILE",
//     "--codec CODEC", never "UINT:INT in [1 - 1024]" or "TEXT";
//   - positionals in capitals, as in the usage line: "Usage: zrec cat [OPTIONS] STORE [SELECTION]";
//   - defaults one way, at the end of the description: "(default: 64)"; a description
//     that already says "(default: ...)" keeps its own words;
//   - "(required)", "(needs --dense)", "(not with --ragged)" in the description too;
//   - under each subcommand, the root's options as "Global options" (they are accepted
//     after the command word as well as before it);
//   - last, the description and examples that the command's man page marks (help_text.h).
// The options themselves (their CLI11 type names, which the completion generator and
// the negative-number check read) are left unchanged.
#pragma once

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

void use_help_format(CLI::App& root);

}  // namespace zrec::cli
