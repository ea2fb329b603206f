// KeyIndex (see key_index.h).
#include "cli/view/key_index.h"

#include <fcntl.h>

#include <algorithm>

#include "cli/os/side_file.h"

namespace zrec::cli::view {

namespace {

constexpr size_t kChunk = 1 << 16;

}  // namespace

Result<std::unique_ptr<KeyIndex>> KeyIndex::open(const std::string& path) {
  ZREC_ASSIGN_OR_RETURN(io::File file, open_side_file(path, "--keys"));  // a FIFO is refused, not waited on
  std::unique_ptr<KeyIndex> index(new KeyIndex(std::move(file)));
  std::lock_guard<std::mutex> lock(index->mutex_);
  ZREC_RETURN_IF_ERROR(index->extend());
  return index;
}

uint64_t KeyIndex::lines() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lines_;
}

Status KeyIndex::extend() {
  ZREC_ASSIGN_OR_RETURN(uint64_t size, file_.size());
  std::vector<char> buf(kChunk);
  uint64_t pos = indexed_bytes_;
  while (pos < size) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, size - pos));
    ZREC_RETURN_IF_ERROR(file_.pread_exact(buf.data(), n, pos));
    for (size_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') continue;
      if (lines_ % stride_ == 0) starts_.push_back(indexed_bytes_);
      ++lines_;
      indexed_bytes_ = pos + i + 1;
      if (starts_.size() > kMaxEntries) {
        // Keep every other start: the stride doubles, the index halves.
        for (size_t k = 0; 2 * k < starts_.size(); ++k) starts_[k] = starts_[2 * k];
        starts_.resize((starts_.size() + 1) / 2);
        stride_ *= 2;
      }
    }
    pos += n;
  }
  return Status::ok();
}

Result<std::optional<std::string>> KeyIndex::key(uint64_t id) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (id >= lines_) ZREC_RETURN_IF_ERROR(extend());
  if (id >= lines_) return std::optional<std::string>();
  uint64_t line = id / stride_ * stride_;
  uint64_t pos = starts_[id / stride_];
  std::string key;
  bool escaped = false;
  std::vector<char> buf(kChunk);
  for (;;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, indexed_bytes_ - pos));
    ZREC_RETURN_IF_ERROR(file_.pread_exact(buf.data(), n, pos));
    for (size_t i = 0; i < n; ++i) {
      const char c = buf[i];
      if (line < id) {
        if (c == '\n') ++line;
        continue;
      }
      if (escaped) {
        escaped = false;
        if (key.size() < kMaxKeyBytes) key += c == 'n' ? '\n' : c == 'r' ? '\r' : c;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '\n') {
        return std::optional<std::string>(std::move(key));
      } else if (key.size() < kMaxKeyBytes) {
        key += c;
      }
    }
    pos += n;
  }
}

}  // namespace zrec::cli::view
