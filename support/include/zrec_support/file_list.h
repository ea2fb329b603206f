// Lists of file names: append-files' '-' operand and --files-from, train-dict's
// --files-from. One rule for every list, so the same list means the same files to
// every command:
//
// - Newline lists (the default): a name ends at LF or at the end of the input, and one
//   CR just before its end is dropped, so a list saved with CRLF line ends names the
//   same files. A name that holds LF, or ends in CR, can be given only in a
//   NUL-separated list; a NUL byte in a newline list is an error (no path holds one:
//   the list was written by find -print0 and wants --null).
// - NUL-separated lists (--null, -0; find -print0, xargs -0): a name ends at NUL or at
//   the end of the input; every other byte, LF and CR included, is part of the name.
// - Empty names (blank lines, a trailing separator, two NULs in a row) are skipped:
//   no file has an empty name.
// - A name longer than kMaxPathBytes is an error, so a list without its separators
//   (or with the wrong ones) stops at once instead of growing memory with the input.
//
// Errors name the list and the name's position counted from 1, blank lines included,
// as an editor numbers them: "'list.txt' line 3 ..." (newline lists), "'-' name 3 ..."
// (NUL-separated lists).
//
// Example:
//   std::vector<std::string> names;
//   ZREC_RETURN_IF_ERROR(read_file_list("list.txt", ListSeparator::kNewline, names));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/context.h"
#include "zrec/status.h"

namespace zrec {

// The longest name a list may hold (PATH_MAX, the kernel's limit on a path).
inline constexpr size_t kMaxPathBytes = 4096;

enum class ListSeparator { kNewline, kNul };

// Splits a list given in pieces of any size into names by the rule above, appending
// them to `out`. Used by read_file_list; a caller with the bytes in memory may use it
// directly.
class FileListParser {
 public:
  // `list` names the list in errors ("-" for stdin).
  FileListParser(std::string list, ListSeparator separator, std::vector<std::string>& out)
      : list_(std::move(list)), separator_(separator), out_(out) {}

  // The next bytes of the list. Errors (kInvalidArgument): a name longer than
  // kMaxPathBytes; a NUL byte in a newline list. After an error the parser is spent.
  Status add(std::string_view bytes);
  // The end of the list: its last name needs no separator after it.
  Status finish();

 private:
  Status end_name();
  Status too_long() const;
  std::string list_;
  ListSeparator separator_;
  std::vector<std::string>& out_;
  std::string name_;     // the name read so far (for newline lists, with any CR)
  uint64_t number_ = 1;  // the position of name_ in the list
};

// Reads the list `path` ("-": stdin) to its end, appending its names to `out`. Errors:
// the list cannot be opened or read (kIOError, naming it); those of FileListParser;
// kCancelled when `control`'s token says so (a list piped from a program that never
// ends: the CLI passes its interrupt token).
Status read_file_list(const std::string& path, ListSeparator separator, std::vector<std::string>& out,
                      Control control = {});

}  // namespace zrec
