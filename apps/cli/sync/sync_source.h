// What `zrec sync` copies (docs/remote.md, "Publishing to a bucket"): a store or a root,
// found sound first (the structure check of verify, or every record with --verify), and
// its files in the one order that keeps every reader whole. Nothing else decides that
// order: the uploader and the local copy send files in the order given here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zrec/remote.h"
#include "zrec/status.h"

#include "cli/app/command.h"

namespace zrec::cli {

// One file of the source, by its path relative to the source ("data_0.zr",
// "jpg/meta.zr", "zrec-root").
struct SyncFile {
  std::string rel;
  bool data = false;    // a data file: only ever grows by appends, so a copy may send its tail
  bool marker = false;  // the root's marker: the last file, written conditionally
};

struct SyncSource {
  std::string path;
  bool root = false;
  uint64_t length = 0;               // records (a root: committed samples)
  std::vector<std::string> streams;  // a root's, from its marker
  // The publish order: every data file (of every stream), then each store's dict.zr and
  // meta.zr (a reader that fetched a meta.zr finds every byte it points to), then a
  // root's marker (a reader that fetched it finds every stream it names, each holding at
  // least its count).
  std::vector<SyncFile> files;
  uint64_t records_decoded = 0;  // --verify
};

// Checks the store or root at `path` (local or URL) as `zrec verify --quick` does, or
// decoding every record when `decode`, and lists its files. A problem refuses the copy:
// "SRC is not sound (...): nothing was copied".
Result<SyncSource> examine_source(const std::string& path, bool decode, const GlobalOptions& global);

}  // namespace zrec::cli
