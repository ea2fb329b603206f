// Lists of file names (see file_list.h).
#include "zrec_support/file_list.h"

#include <algorithm>
#include <cstring>

#include "zrec_support/input_stream.h"

namespace zrec {

namespace {

// Where a newline list's name may hold one byte more than a path: its CR, dropped at the end.
size_t pending_limit(ListSeparator separator) { return kMaxPathBytes + (separator == ListSeparator::kNewline ? 1 : 0); }

}  // namespace

Status FileListParser::add(std::string_view bytes) {
  const char sep = separator_ == ListSeparator::kNul ? '\0' : '\n';
  while (!bytes.empty()) {
    const void* found = std::memchr(bytes.data(), sep, bytes.size());
    const size_t piece = found ? static_cast<size_t>(static_cast<const char*>(found) - bytes.data()) : bytes.size();
    if (separator_ == ListSeparator::kNewline && std::memchr(bytes.data(), '\0', piece) != nullptr)
      return invalid_argument("'" + list_ + "' line " + std::to_string(number_) +
                              " holds a NUL byte, which no path can: one name per line (--null reads "
                              "NUL-separated names, as find -print0 writes them)");
    // At most one byte past the limit is kept: enough to know the name is too long.
    const size_t limit = pending_limit(separator_);
    name_.append(bytes.data(), std::min(piece, limit + 1 - name_.size()));
    if (name_.size() > limit) return too_long();
    if (!found) break;
    ZREC_RETURN_IF_ERROR(end_name());
    bytes.remove_prefix(piece + 1);
  }
  return Status::ok();
}

Status FileListParser::finish() { return end_name(); }

Status FileListParser::end_name() {
  if (separator_ == ListSeparator::kNewline && !name_.empty() && name_.back() == '\r') name_.pop_back();
  if (name_.size() > kMaxPathBytes) return too_long();
  if (!name_.empty()) out_.push_back(std::move(name_));
  name_.clear();
  ++number_;
  return Status::ok();
}

Status FileListParser::too_long() const {
  const bool nul = separator_ == ListSeparator::kNul;
  return invalid_argument(
      "'" + list_ + "' " + (nul ? "name " : "line ") + std::to_string(number_) + " is longer than " +
      std::to_string(kMaxPathBytes) + " bytes, more than any path: " +
      (nul ? "names must be NUL-separated" : "one name per line (or --null for NUL-separated names)"));
}

Status read_file_list(const std::string& path, ListSeparator separator, std::vector<std::string>& out,
                      Control control) {
  ZREC_ASSIGN_OR_RETURN(auto in, io::InputStream::open(path, std::move(control)));
  FileListParser parser(path, separator, out);
  std::vector<char> chunk(size_t{1} << 16);
  for (;;) {
    ZREC_ASSIGN_OR_RETURN(size_t got, in.read_some(chunk.data(), chunk.size()));
    if (got == 0) return parser.finish();
    ZREC_RETURN_IF_ERROR(parser.add(std::string_view(chunk.data(), got)));
  }
}

}  // namespace zrec
