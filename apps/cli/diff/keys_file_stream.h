// A keys file (one key per line, line i naming sample i, as append-tar --keys and
// append-lmdb --keys write them) standing in for the __key__ stream of a side of
// `zrec diff --by-key` that has none: a store, or a root built without --keys-stream.
#pragma once

#include <string>

#include "zrec/status.h"

#include "cli/diff/diff_side.h"

namespace zrec::cli {

// Reads `file` (a path, or `-` is refused: both sides may need one) and adds its keys to
// `side` as the stream __key__, held in a store made under `scratch_dir` (removed with
// it), so memory stays bounded whatever the file's size. The file must hold exactly one
// non-empty line per sample of `side`; otherwise kInvalidArgument naming `option`, the
// file, the line and the rule. A side that has a __key__ stream already is refused: one
// source of keys per side.
Status add_keys_file(DiffSide& side, const std::string& file, const std::string& option,
                     const std::string& scratch_dir);

}  // namespace zrec::cli
