// The one rule for the name of a stream in a root of named streams (docs/import.md).
// A stream's name is a directory under the root, the extension of a tar member that
// cat --format tar writes, a word in tables, summaries and Slurm job logs; it comes
// from outside (tar member names, --ext, --parse, a root's directory listing). A name
// that is a store file (a directory ROOT/meta.zr makes ROOT look like a store), a
// temporary (hidden from listings, removed by a later run), hidden, or that holds a
// newline, an escape or a shell metacharacter would break one of those uses, so every
// name is checked here, the same way, before it is used.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zrec/status.h"

namespace zrec::cli {

// The rule, for messages: what a stream name may be.
inline constexpr const char* kStreamNameRule =
    "a stream name is 1 to 128 letters, digits, '_' and '-', in words joined by single dots "
    "(jpg, seg.png), not starting with '-', with no word starting 'zrec-' or 'tmp-', and not ending in '.zr'";

// Empty when `name` may name a stream; otherwise why not, in a few words ("it is
// hidden (starts with '.')", "it holds the byte 0x0a", "it is a store file name (ends
// in '.zr')").
std::string stream_name_problem(std::string_view name);

// kInvalidArgument "'ROOT' holds the store 'NAME', which cannot be a stream: WHY (the
// rule); move it out of the root" for the first of `names` (the stores a root holds)
// that breaks the rule: append-tar and cat --format tar refuse such a root whole,
// rather than write into it or leave a stream out.
Status check_root_streams(const std::string& root, const std::vector<std::string>& names);

}  // namespace zrec::cli
