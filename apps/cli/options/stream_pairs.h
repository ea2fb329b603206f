// The options of the root appends that pair each stream of a root with its source, one
// per stream: append-npy's --stream NAME=FILE, append-h5's --dataset H5PATH=STREAM and
// append-lmdb's --db NAME=STREAM.
//
// Example:
//   auto pairs = parse_stream_pairs(specs, {.option = "--db", .stream_first = false,
//                                           .expected = "expected NAME=STREAM, e.g. --db labels=label"});
//   // "--db 'x'" -> UsageError "--db 'x': expected NAME=STREAM, e.g. --db labels=label"
#pragma once

#include <string>
#include <vector>

namespace zrec::cli {

struct StreamPairForm {
  const char* option = "";  // "--stream"
  // STREAM=SOURCE, split at the first '=' (a path may hold one); else SOURCE=STREAM,
  // split at the last '=' (a stream name never holds one, an HDF5 path or database may).
  bool stream_first = true;
  const char* expected = "";  // what a value without both sides is told, after "OPTION 'VALUE': "
};

struct StreamPair {
  std::string stream, source;
};

// The pairs in the order given; a value without both sides, or a stream named twice, is
// a UsageError naming the option and the value.
std::vector<StreamPair> parse_stream_pairs(const std::vector<std::string>& specs, const StreamPairForm& form);

}  // namespace zrec::cli
