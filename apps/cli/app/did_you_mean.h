// Did you mean ...? Everything zrec does about mistyped names, in two layers.
//
// 1. closest_name: the candidate closest to what was typed, by edit distance, when it
//    is close enough to be a likely typo.
//
//   closest_name("crate", {"create", "cat", "info"})     -> "create"
//   closest_name("--threds", {"--threads", "--wait"})     -> "--threads"
//   closest_name("--frobnicate", {"--threads", "--wait"}) -> ""  (nothing close)
//
// 2. find_unknown_name: the first mistyped command or option name, found before CLI11
// parses the command line, so the error names what was mistyped and suggests the
// nearest real name, instead of what CLI11 would report first ("--dtype is required" for `zrec create --threds 2 s/`,
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

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// The optimal-string-alignment distance (Damerau-Levenshtein without overlapping
// edits): insertions, deletions, substitutions and swaps of two adjacent characters
// each cost 1, so "digets" is 1 away from "digest".
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `typed`, or "" when none is within the typo threshold:
// one edit for names of up to 5 characters, two for 6 to 8, three for 9 to 11, and so
// on, so that short words do not match everything. Leading dashes are not counted
// ("--thread" is 6 long, 1 edit from "--threads"). On a tie the earlier candidate wins.
std::string closest_name(std::string_view typed, const std::vector<std::string>& candidates);

struct UnknownName {
  bool is_command = false;  // an unknown command word rather than an option
  std::string where;        // "zrec" or "zrec create": whose --help lists the real names
  std::string message;      // "unknown command 'crate'; did you mean 'create'?"
};

// Whether `o` takes a value: flags (--json, -v) take none, options one per occurrence.
// The next word is then its value here, and --help and the completion scripts show one.
bool takes_value(const CLI::Option* o);

// The first unknown name in `args` (argv without the program name), or nothing when
// every name is known (CLI11 then reports any other misuse).
std::optional<UnknownName> find_unknown_name(const CLI::App& root, const std::vector<std::string>& args);

}  // namespace zrec::cli
