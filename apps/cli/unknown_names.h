// Finds a mistyped command or option name before CLI11 parses the command line, so the
// error names what was mistyped and suggests the nearest real name, instead of what
// CLI11 would report first ("--dtype is required" for `zrec create --threds 2 s/`,
// "A subcommand is required" for `zrec -v crate`).
//
//   std::vector<std::string> args(argv + 1, argv + argc);
//   if (auto bad = find_unknown_name(app, args))
//     fprintf(stderr, "%s: %s\n", bad->where.c_str(), bad->message.c_str());
//     // "zrec create: unknown option '--threds'; did you mean '--threads'?"
//
// Words are classified as CLI11 does: after "--" everything is a positional; "--name"
// and "--name=value" are long options; "-x..." a short one unless x is a digit that is
// no short option (then it is a number: cat's selection -1); an option that takes a
// value consumes the next word when the value is not attached. The first positional
// names the command; later ones are the command's own.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace zrec::cli {

struct UnknownName {
  bool is_command = false;  // an unknown command word rather than an option
  std::string where;        // "zrec" or "zrec create": whose --help lists the real names
  std::string message;      // "unknown command 'crate'; did you mean 'create'?"
};

// The first unknown name in `args` (argv without the program name), or nothing when
// every name is known (CLI11 then reports any other misuse).
std::optional<UnknownName> find_unknown_name(const CLI::App& root, const std::vector<std::string>& args);

}  // namespace zrec::cli
