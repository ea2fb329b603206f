// append-lmdb ROOT ENV --db NAME=STREAM ...: named databases of one LMDB environment
// into every stream of a root at once, aligned by key: sample i is the i-th key, in key
// order, and every database must hold the same keys (see root_append.h for the root).
//
// A value becomes a record of its stream as its schema says: a Dense stream takes values
// of exactly its record's bytes, a Ragged ndim-1 stream values of whole items (the
// value's bytes in the stream's dtype, its byte order included). A root whose stream
// __key__ no --db feeds gets each sample's key there, as append-tar --keys-stream keeps it.
#pragma once

#include <string>
#include <vector>

#include "zrec/status.h"

#include "cli/app/command.h"
#include "cli/import/append_session.h"

namespace zrec::cli {

struct LmdbRootArgs {
  std::string root, env, prefix;          // --prefix: only the keys that start with it
  std::vector<std::string> dbs;           // the --db NAME=STREAM options as given
  std::vector<std::string> exclude_keys;  // --exclude-key: keys left out of every database
};

Status append_lmdb_to_root(const LmdbRootArgs& a, const AppendArgs& args, const GlobalOptions& global);

}  // namespace zrec::cli
