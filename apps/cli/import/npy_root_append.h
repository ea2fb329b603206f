// append-npy ROOT --stream NAME=FILE ...: .npy arrays into every stream of a root at
// once, sample i being record i of each stream's input (see root_append.h).
#pragma once

#include <string>
#include <vector>

#include "zrec/status.h"

#include "cli/app/command.h"
#include "cli/import/append_session.h"

namespace zrec::cli {

// `specs` are the --stream NAME=FILE options as given; FILE is a .npy file, a file of
// concatenated .npy arrays, or - (stdin, for one of them at most).
Status append_npy_to_root(const std::string& root, const std::vector<std::string>& specs, bool split_axis0,
                          const AppendArgs& args, const GlobalOptions& global);

}  // namespace zrec::cli
