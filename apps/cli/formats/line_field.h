// One field of a line-oriented text file zrec writes (append-tar --keys, append-files
// --manifest): backslash, newline and CR, and tab where tab separates fields, are written
// as \\, \n, \r and \t, so that a line is a record and the fields can be split again.
//
// Example:
//   std::string line;
//   append_line_field(line, "a\tb\n", LineField::kTabSeparated);  // line == "a\\tb\\n"
//   append_line_field(line, "a\tb", LineField::kWholeLine);       // tab kept as is
#pragma once

#include <string>
#include <string_view>

namespace zrec::cli {

enum class LineField {
  kWholeLine,     // the field is the whole line: tab is written as is
  kTabSeparated,  // fields are separated by tabs: tab is escaped too
};

void append_line_field(std::string& out, std::string_view text, LineField field);

}  // namespace zrec::cli
