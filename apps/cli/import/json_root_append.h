// append-stream ROOT: JSON lines into every stream of a root at once, one object per
// sample with one key per stream (see root_append.h for the root side).
#pragma once

#include <string>
#include <vector>

#include "zrec/status.h"

#include "cli/app/command.h"
#include "cli/import/append_session.h"

namespace zrec::cli {

// `input`: a file, or - for stdin. `parse`: the --parse STREAM=HOW options as given
// (HOW: text, bytes, int, float, ints, floats); a stream not named gets the HOW its
// schema implies.
Status append_json_to_root(const std::string& root, const std::string& input, const std::vector<std::string>& parse,
                           bool skip_empty, const AppendArgs& args, const GlobalOptions& global);

}  // namespace zrec::cli
