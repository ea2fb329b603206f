// Numeric records as `zrec view` shows them: NumPy's printout (summarised as NumPy does
// past 1000 elements: the first and last 3 along each axis, "..." between), min, max and
// mean, and for a 1-D record a sparkline of its values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zrec/dtype.h"

namespace zrec::cli::view {

// NumPy's print options: arrays above kSummaryThreshold elements are summarised, showing
// kEdgeItems at each end of every axis.
inline constexpr uint64_t kSummaryThreshold = 1000;
inline constexpr uint64_t kEdgeItems = 3;

struct NumberSummary {
  std::string text;         // the printout, cut at max_text_bytes ("..." appended)
  bool summarised = false;  // "..." stands for elements left out
  uint64_t elements = 0;
  // For bool, integer and float dtypes with at least one non-NaN element:
  std::optional<double> min, max, mean;
  uint64_t nan_count = 0;
  // 1-D numeric records of 2 or more elements: the mean of each of up to `points` equal
  // runs of elements, in order (NaN elements left out; a run of NaNs is nullopt).
  std::vector<std::optional<double>> sparkline;
};

// `data` holds the record's prod(dims) elements of `dtype`, C order.
NumberSummary summarize_numbers(const DType& dtype, std::span<const uint64_t> dims, const uint8_t* data,
                                size_t sparkline_points, size_t max_text_bytes);

}  // namespace zrec::cli::view
