// Record selections for `zrec cat`: NumPy basic indexing of axis 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/input_stream.h"
#include "zrec/status.h"

namespace zrec::cli {

// One item of a selection: a single index or a slice start:stop:step; each field may
// be absent (NumPy defaults) and indices may be negative (counted from the end).
struct SelectionItem {
  bool is_slice = false;
  int64_t index = 0;                                   // when !is_slice
  std::optional<int64_t> start, stop, step;            // when is_slice; step != 0
};

// Parses "7", "-1", "10:20", "::100", "3,5,8", "1:5,9,-3:" (comma-separated items,
// each an index or a slice). Whitespace around items is allowed. Empty text, empty
// items, step 0, non-numbers and values outside int64 are kInvalidArgument with a
// message that quotes the text.
Result<std::vector<SelectionItem>> parse_selection(std::string_view text);

// Resolves items against a store of `length` records, in order, to record IDs.
// Slices clamp like NumPy (never an error, may select nothing); a single index
// outside [-length, length) is kInvalidArgument: "index 12 is out of range for a
// store of 10 records".
Result<std::vector<uint64_t>> resolve_selection(const std::vector<SelectionItem>& items,
                                                uint64_t length);

// Reads one index per line (negative allowed; blank lines and surrounding whitespace
// ignored) from `in`, resolved against `length`. Errors name the stream and line number.
Result<std::vector<uint64_t>> read_indices(io::InputStream& in, uint64_t length);

}  // namespace zrec::cli
