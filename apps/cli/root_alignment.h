// Whether a directory of stores is a root that append-tar built (ROOT/zrec-root,
// docs/format.md §12) and, for one that is, whether its streams line up with what it
// committed. info and verify say this the same way; a directory without the marker is
// a set of unrelated stores, whose lengths mean nothing together.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "zrec/dataset.h"
#include "zrec/status.h"

namespace zrec::cli {

struct RootProblem {
  std::string key;   // "root_length" (a stream's length is not the committed count), "root_streams"
  std::string text;  // what is wrong, naming the stream; printable
};

// A store in a root that its marker does not list: no problem of the root (its committed
// samples are whole), a stream being made that zrec adopt has not committed yet.
struct RootNote {
  std::string name;  // the store's
  std::string text;  // "'q5' is not committed yet: ..."; printable
};

// The problems of a marked root with `state`, whose stores (subdirectories holding a
// store) have `lengths` (name -> records; a store that could not be opened is absent
// from `lengths` but named in `stores`): every listed stream must be a store holding
// exactly state.length records; a store that is a symbolic link in `root` is none of its
// streams (zrec::check_root_stream). Empty: aligned. Stores the marker does not list are
// unadopted_stores(), not problems.
std::vector<RootProblem> root_problems(const std::string& root, const RootState& state,
                                       const std::vector<std::string>& stores,
                                       const std::map<std::string, uint64_t>& lengths);

// The stores of the root that its marker does not list, each with a note saying what
// zrec adopt would make of it (an empty one in a root that committed nothing is a stream
// a killed first run created, and left out).
std::vector<RootNote> unadopted_stores(const std::string& root, const RootState& state,
                                       const std::vector<std::string>& stores,
                                       const std::map<std::string, uint64_t>& lengths);

// The words for a directory without the marker: "not a root (no zrec-root marker): its N
// stores are unrelated; their lengths are not compared".
std::string unmarked_note(size_t stores);

}  // namespace zrec::cli
