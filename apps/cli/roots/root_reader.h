// A root of named streams opened for reading (docs/format.md §12), as digest, recompress,
// concat and cat read one: its committed streams, each a store holding at least the
// committed samples, of which only samples 0 .. length-1 are read.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zrec/dataset.h"
#include "zrec/status.h"
#include "zrec/store.h"

#include "cli/app/command.h"

namespace zrec::cli {

struct RootStream {
  std::string name;  // the stream's (its subdirectory)
  std::unique_ptr<Store> store;
};

struct OpenedRoot {
  std::string path;
  RootState state;                  // the committed marker: streams and samples
  std::vector<RootStream> streams;  // in name order, as the marker lists them
  Context ctx = {};                 // what its operations run in (GlobalOptions::read_context)
};

// True when `path` (a directory or a URL) is a root: no store itself, and it has a
// zrec-root marker (one request for a URL, two for a store).
bool is_root(const std::string& path, const GlobalOptions& g);

// Opens every stream the marker of root `path` lists, as cat --format tar does: a root
// holding a store whose name breaks the stream name rule, a listed stream that is a link
// or no store, or one holding fewer records than the committed samples is refused
// (kInvalidArgument naming the root, the stream and the rule). A stream of a root that
// committed no sample may be missing; it is then left out.
Result<OpenedRoot> open_root(const std::string& path, const GlobalOptions& g);

}  // namespace zrec::cli
