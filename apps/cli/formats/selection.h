// Record selections for `zrec cat`: NumPy basic indexing of axis 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/status.h"

#include "zrec_support/input_stream.h"

namespace zrec::cli {

// One item of a selection: a single index or a slice start:stop:step; each field may
// be absent (NumPy defaults) and indices may be negative (counted from the end).
struct SelectionItem {
  bool is_slice = false;
  int64_t index = 0;                         // when !is_slice
  std::optional<int64_t> start, stop, step;  // when is_slice; step != 0
};

// Parses "7", "-1", "10:20", "::100", "3,5,8", "1:5,9,-3:" (comma-separated items,
// each an index or a slice). Whitespace around items is allowed. Empty text, empty
// items, step 0, non-numbers and values outside int64 are kInvalidArgument with a
// message that quotes the text.
Result<std::vector<SelectionItem>> parse_selection(std::string_view text);

// A resolved item: `count` IDs start, start +- step, ... (never materialized, so a
// selection of a billion records costs nothing until it is read).
struct IdRun {
  uint64_t start = 0;
  uint64_t step = 1;  // magnitude
  bool backward = false;
  uint64_t count = 0;
  // The k-th ID (k < count): k * step < length, so it cannot overflow.
  uint64_t at(uint64_t k) const { return backward ? start - k * step : start + k * step; }
};

// Resolves items to runs, with the same rules and errors as resolve_selection().
Result<std::vector<IdRun>> resolve_runs(const std::vector<SelectionItem>& items, uint64_t length);

// The k-th ID of a resolved selection (`cat`, and `zrec view`'s pages and samples), for
// k < total(): runs are walked by their cumulative counts (a handful of runs, so this is
// a short binary search, no ID list). With a non-empty `list` (cat --indices-from), the
// runs select positions in it. Keeps references to runs and list.
class SelectionIndex {
 public:
  SelectionIndex(const std::vector<IdRun>& runs, const std::vector<uint64_t>& list);
  uint64_t total() const { return ends_.empty() ? 0 : ends_.back(); }
  uint64_t at(uint64_t k) const;

 private:
  const std::vector<IdRun>& runs_;
  const std::vector<uint64_t>& list_;
  std::vector<uint64_t> ends_;
};

// Resolves items against a store of `length` records, in order, to record IDs.
// Slices clamp like NumPy (never an error, may select nothing); a single index
// outside [-length, length) is kInvalidArgument: "index 12 is out of range for a
// store of 10 records".
Result<std::vector<uint64_t>> resolve_selection(const std::vector<SelectionItem>& items, uint64_t length);

// Reads one index per line (negative allowed; blank lines and surrounding whitespace
// ignored) from `in`, resolved against `length`. Errors name the stream and line number.
// The longest line read_indices accepts: an index is at most 20 characters, with room
// for blanks. A longer line (input without newlines) is an error naming it, so memory
// follows the lines, not the input.
inline constexpr size_t kMaxIndexLineBytes = 256;

Result<std::vector<uint64_t>> read_indices(io::InputStream& in, uint64_t length);

}  // namespace zrec::cli
