// append-h5 ROOT FILE --dataset H5PATH=STREAM ...: datasets of one HDF5 file into every
// stream of a root at once, row i of every dataset being sample i (see root_append.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "zrec/status.h"

#include "cli/app/command.h"
#include "cli/import/append_session.h"

namespace zrec::cli {

struct H5RootArgs {
  std::string root, file;
  std::vector<std::string> datasets;  // the --dataset H5PATH=STREAM options as given
  uint64_t start = 0;                 // --start/--stop: the rows of every dataset
  std::optional<uint64_t> stop;
  bool allow_external = false;
};

Status append_h5_to_root(const H5RootArgs& a, const AppendArgs& args, const GlobalOptions& global);

}  // namespace zrec::cli
