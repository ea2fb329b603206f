// The bytes of a root marker (docs/format.md §12; zrec/dataset.h, "roots"): its codec,
// which only the library's reader (read_root_marker) and writer (store/root_writer.h)
// use. Not installed: programs read a marker through zrec::Dataset.
#pragma once

#include <string>

#include "zrec/dataset.h"
#include "zrec/status.h"

namespace zrec {

// The marker's bytes for `state`: "zrec-root 1", "length N", then one "stream NAME"
// line per stream, each line ending in '\n'; in names, backslash, newline and CR are
// written \\, \n and \r. kInvalidArgument for a name the marker cannot hold (empty, ".",
// "..", with '/' or NUL; unsorted or repeated).
Result<std::string> encode_root_marker(const RootState& state);
// Parses marker bytes; kMalformed naming `path` and the rule broken.
Result<RootState> decode_root_marker(const std::string& bytes, const std::string& path);

}  // namespace zrec
