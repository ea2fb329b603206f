#include "cli/formats/line_field.h"

namespace zrec::cli {

void append_line_field(std::string& out, std::string_view text, LineField field) {
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += field == LineField::kTabSeparated ? "\\t" : "\t";
        break;
      default:
        out += c;
    }
  }
}

}  // namespace zrec::cli
