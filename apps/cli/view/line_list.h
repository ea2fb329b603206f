// The lines of a --labels or --vocab file (zrec view), held compactly: the file's bytes
// once, without the newlines, and where each line ends (4 bytes a line). A vocabulary of
// 16 M lines held as std::strings cost about 95 bytes a line (1.5 GB for an empty-line
// file of 16 MiB); this costs 4 and the file.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace zrec::cli::view {

class LineList {
 public:
  LineList() = default;
  // The lines of `bytes` (taken over): split at '\n', a CR before it dropped (Windows
  // line ends), a last line without a newline kept when it is nonempty. `bytes` must be
  // smaller than 4 GiB (the names files are at most 16 MiB).
  explicit LineList(std::vector<uint8_t> bytes);

  size_t size() const { return ends_.size(); }
  std::string_view operator[](size_t i) const {
    const uint32_t begin = i == 0 ? 0 : ends_[i - 1];
    return {reinterpret_cast<const char*>(bytes_.data()) + begin, ends_[i] - begin};
  }

 private:
  std::vector<uint8_t> bytes_;  // the lines back to back
  std::vector<uint32_t> ends_;  // line i is bytes_[ends_[i - 1] (0 for the first), ends_[i])
};

}  // namespace zrec::cli::view
