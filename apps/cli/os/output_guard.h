// zrec writes only where it was asked to: an output path (-o, --manifest, DST) that
// lands inside a store the command reads or writes, or onto one of its files (through
// a symlink, a hard link, "..", or a bind of the same directory), would overwrite that
// store (train-dict S -o S/dict.zr, cat S -o S/meta.zr, recompress S S/dict.zr). Each
// such path is refused before anything is opened for writing.
#pragma once

#include <string>
#include <vector>

#include "zrec/status.h"

namespace zrec::cli {

// kInvalidArgument "OPTION 'OUT' is inside store 'S', which this command reads or
// writes; choose a path outside it" when `output` ("-": stdout, always fine) resolves
// into or onto one of `stores` (or onto `stores` themselves). Paths are compared as
// files, not strings: each ancestor of realpath(dirname(output)) is matched by
// st_dev/st_ino against each store directory, and an existing `output` against every
// file of each store. A `stores` entry that is a plain file (train-dict's .npy inputs)
// is matched as that file. Paths that do not exist are not inside anything.
Status refuse_output_into_stores(const std::string& output, const std::string& option,
                                 const std::vector<std::string>& stores);

// kAlreadyExists "'DST' already exists; choose a new destination" when anything (a
// link included) is at `dst`: recompress and concat build a new store or root and rename
// it into place, never over another.
Status refuse_existing_destination(const std::string& dst);

}  // namespace zrec::cli
