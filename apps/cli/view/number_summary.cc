// summarize_numbers (see number_summary.h).
#include "cli/view/number_summary.h"

#include <cmath>

#include "cli/formats/record_format.h"

namespace zrec::cli::view {

namespace {

struct Printer {
  const DType& dtype;
  std::span<const uint64_t> dims;
  bool summarise;
  size_t max_bytes;
  std::string& out;

  // Elements in one step along `axis`: prod(dims[axis + 1 ..]).
  uint64_t step(size_t axis) const {
    uint64_t n = 1;
    for (size_t d = axis + 1; d < dims.size(); ++d) n *= dims[d];
    return n;
  }

  void print(size_t axis, const uint8_t* data) {
    if (out.size() > max_bytes) return;
    const uint64_t n = dims[axis];
    const uint64_t stride = step(axis) * dtype.itemsize;
    // Between items: a space on the last axis; before that, as NumPy: newlines (one more
    // per axis from the end) and an indent to the depth of the bracket.
    const std::string separator =
        axis + 1 == dims.size() ? " " : std::string(dims.size() - axis - 1, '\n') + std::string(axis + 1, ' ');
    const bool cut = summarise && n > 2 * kEdgeItems;
    out += '[';
    for (uint64_t i = 0; i < n; ++i) {
      if (cut && i == kEdgeItems) {
        out += "...";
        out += separator;
        i = n - kEdgeItems;
      }
      if (axis + 1 == dims.size()) append_text_record(out, dtype, {}, data + i * stride);
      else print(axis + 1, data + i * stride);
      if (i + 1 < n) out += separator;
      if (out.size() > max_bytes) return;
    }
    out += ']';
  }
};

}  // namespace

NumberSummary summarize_numbers(const DType& dtype, std::span<const uint64_t> dims, const uint8_t* data,
                                size_t sparkline_points, size_t max_text_bytes) {
  NumberSummary s;
  s.elements = 1;
  for (uint64_t d : dims) s.elements *= d;
  s.summarised = s.elements > kSummaryThreshold;
  if (dims.empty()) {
    append_text_record(s.text, dtype, {}, data);
  } else if (s.elements == 0) {
    append_text_record(s.text, dtype, dims, data);
  } else {
    Printer{dtype, dims, s.summarised, max_text_bytes, s.text}.print(0, data);
  }
  if (s.text.size() > max_text_bytes) {
    s.text.resize(max_text_bytes);
    s.text += "...";
  }

  const bool numeric = dtype.kind == DTypeKind::kBool || dtype.kind == DTypeKind::kInt ||
                       dtype.kind == DTypeKind::kUInt || dtype.kind == DTypeKind::kFloat;
  if (!numeric || s.elements == 0) return s;
  double sum = 0;
  uint64_t counted = 0;
  for (uint64_t i = 0; i < s.elements; ++i) {
    const double v = *element_as_double(dtype, data + i * dtype.itemsize);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    s.min = s.min ? std::min(*s.min, v) : v;
    s.max = s.max ? std::max(*s.max, v) : v;
    sum += v;
    ++counted;
  }
  if (counted > 0) s.mean = sum / double(counted);
  if (dims.size() == 1 && s.elements >= 2 && sparkline_points > 0) {
    const uint64_t points = std::min<uint64_t>(sparkline_points, s.elements);
    for (uint64_t p = 0; p < points; ++p) {
      const uint64_t first = p * s.elements / points, last = (p + 1) * s.elements / points;
      double run = 0;
      uint64_t n = 0;
      for (uint64_t i = first; i < last; ++i) {
        const double v = *element_as_double(dtype, data + i * dtype.itemsize);
        if (!std::isnan(v)) {
          run += v;
          ++n;
        }
      }
      s.sparkline.push_back(n > 0 ? std::optional<double>(run / double(n)) : std::nullopt);
    }
  }
  return s;
}

}  // namespace zrec::cli::view
