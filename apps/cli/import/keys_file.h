// The --keys FILE of append-tar: one line per published record, the sample's key,
// kept in step with the stores' publications. Lines are buffered, written and synced
// before a publication (prepare), and truncated away again when the records are
// aborted (rollback). A kill between the keys' write and the stores' publication
// leaves extra lines, which the next run cuts back (cut_to_lines).
// Backslash, newline and CR in keys are written as \\, \n and \r.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::cli {

class KeysFile {
 public:
  // Opens (creating) `path` for appending: the --keys of `store`, the store or root
  // appended to, which it must lie outside of (cli/os/output_guard.h); an existing file
  // that is not a regular one is refused (cli/os/side_file.h).
  static Result<std::unique_ptr<KeysFile>> open(const std::string& path, const std::string& store);

  // Whether open() created the file: a run that fails before its first publication
  // removes it again (remove_created), so a failed first run leaves no keys file behind.
  bool created() const { return created_; }
  // Removes the file open() created, when it is still empty; a warning says why not.
  void remove_created();

  // Lines in the file (newline-terminated).
  Result<uint64_t> count_lines() const;
  // Puts the file in step with a store that holds `length` records, line i being record
  // i's key: lines past `length` (written by a run that was killed before it published
  // them) are cut away, and how many is returned; fewer lines than `length` fail, naming
  // `store` (the file is not the one of the earlier runs), the file unchanged.
  Result<uint64_t> align(uint64_t length, const std::string& store);
  // Truncates the file to its first n lines.
  Status cut_to_lines(uint64_t n);

  // Whether line `index` (0-based, among the lines there at open()) is `key` as add()
  // would write it; empty when it is, else the line found (escaped), or "(none)" past the
  // end. Lines are read forward through a buffer, so comparing a run of consecutive
  // indices reads the file once: a rerun checks the keys of the samples it skips.
  Result<std::string> differs_at(uint64_t index, std::string_view key);

  void add(std::string_view key);
  // Whether enough lines are buffered to write them out early (prepare()).
  bool wants_flush() const { return buffer_.size() >= (size_t{1} << 20); }
  Status prepare();  // writes and syncs the buffered lines
  void commit() { committed_ = written_; }
  void rollback();
  const std::string& path() const { return path_; }

 private:
  KeysFile(std::string path, io::File f) : path_(std::move(path)), file_(std::move(f)) {}
  std::string path_;
  io::File file_;
  std::string buffer_;
  uint64_t committed_ = 0, written_ = 0;  // file sizes: as of the last publication, and now
  bool created_ = false;
  // differs_at()'s place: the next line's index and offset, and a window of the file.
  uint64_t next_line_ = 0, next_offset_ = 0;
  std::string window_;
  uint64_t window_offset_ = 0;
};

}  // namespace zrec::cli
