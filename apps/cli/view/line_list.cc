// LineList (line_list.h).
#include "cli/view/line_list.h"

#include <algorithm>

namespace zrec::cli::view {

LineList::LineList(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {
  // Counted first, so that ends_ is allocated once at its final size.
  ends_.reserve(static_cast<size_t>(std::count(bytes_.begin(), bytes_.end(), uint8_t{'\n'})) + 1);
  // The lines move down over the newlines, in place.
  uint32_t kept = 0, line = 0;
  for (const uint8_t b : bytes_) {
    if (b != '\n') {
      bytes_[kept++] = b;
      continue;
    }
    if (kept > line && bytes_[kept - 1] == '\r') --kept;
    ends_.push_back(kept);
    line = kept;
  }
  if (kept > line) ends_.push_back(kept);
  bytes_.resize(kept);
  bytes_.shrink_to_fit();
}

}  // namespace zrec::cli::view
