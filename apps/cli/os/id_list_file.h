// A file of sample IDs to leave out (--exclude-from of cat and recompress; `zrec
// duplicates --drop-list` writes one): decimal IDs, one per line, any order, repeats
// allowed. Read whole, 8 bytes an ID: a drop list is a small part of a dataset.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zrec/status.h"

namespace zrec::cli {

// The IDs in `path` ("-": stdin), ascending without repeats; an ID not below `length`
// is an error naming the line (formats/selection.h's read_indices). `option` names the
// option in messages ("--exclude-from").
Result<std::vector<uint64_t>> read_id_list(const std::string& path, const std::string& option, uint64_t length);

}  // namespace zrec::cli
