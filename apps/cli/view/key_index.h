// `zrec view --keys FILE`: the sample keys of a root of named streams, one line per record
// as append-tar --keys writes them (\\, \n and \r escaped), looked up by record ID without
// holding the file in memory: a sparse index keeps the byte offset of every stride-th line,
// at most kMaxEntries of them (the stride doubles as the file grows), and a lookup reads
// forward from the nearest one. Memory is therefore bounded whatever the number of keys.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::cli::view {

class KeyIndex {
 public:
  static constexpr size_t kMaxEntries = 65536;
  static constexpr size_t kMaxKeyBytes = 4096;  // longer keys are cut here (for display)

  // Opens `path` and indexes its lines. Errors name the file.
  static Result<std::unique_ptr<KeyIndex>> open(const std::string& path);

  // The key on line `id` (0-based), unescaped; nullopt past the last complete line. Lines
  // appended to the file since are indexed first. Thread-safe.
  Result<std::optional<std::string>> key(uint64_t id);

  // Complete lines indexed so far.
  uint64_t lines() const;

 private:
  explicit KeyIndex(io::File file) : file_(std::move(file)) {}
  // Indexes the lines from indexed_bytes_ to the file's end. Requires mutex_.
  Status extend();

  io::File file_;
  mutable std::mutex mutex_;
  std::vector<uint64_t> starts_;  // starts_[k]: byte offset of line k * stride_
  uint64_t stride_ = 1;
  uint64_t lines_ = 0;          // complete lines seen
  uint64_t indexed_bytes_ = 0;  // bytes scanned: up to the end of the last complete line
};

}  // namespace zrec::cli::view
