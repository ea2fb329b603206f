// The words info and verify say of a root's alignment: each zrec::StreamProblem its
// Dataset reports (the rule is the library's, zrec/dataset.h), as a problem of the root
// or as a note on a store not committed yet. A directory without the marker is a set of
// unrelated stores, whose lengths mean nothing together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zrec/dataset.h"

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

// What is wrong with the marked root `ds` whose stores hold `lengths` records (a store
// that could not be opened is absent from it): ds.problems() but its unlisted stores.
// Empty: aligned.
std::vector<RootProblem> root_problems(const Dataset& ds, const std::map<std::string, uint64_t>& lengths);

// The stores of `ds` that its marker does not list, each with a note saying what zrec
// adopt would make of it (an empty one in a root that committed nothing is a stream a
// killed first run created, and left out).
std::vector<RootNote> unadopted_notes(const Dataset& ds, const std::map<std::string, uint64_t>& lengths);

// The words for a directory without the marker: "not a root (no zrec-root marker): its N
// stores are unrelated; their lengths are not compared".
std::string unmarked_note(size_t stores);

}  // namespace zrec::cli
