// "Did you mean ...?" for mistyped command and option names: the candidate closest to
// what was typed, by edit distance, when it is close enough to be a likely typo.
//
//   closest_name("crate", {"create", "cat", "info"})     -> "create"
//   closest_name("--threds", {"--threads", "--wait"})     -> "--threads"
//   closest_name("--frobnicate", {"--threads", "--wait"}) -> ""  (nothing close)
#pragma once

#include <string>
#include <string_view>
#include <vector>

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

}  // namespace zrec::cli
