// KeysFile (see keys_file.h).
#include "cli/keys_file.h"

#include <fcntl.h>

#include <algorithm>
#include <vector>

#include "cli/formats/line_field.h"

namespace zrec::cli {

Result<std::unique_ptr<KeysFile>> KeysFile::open(const std::string& path) {
  ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_RDWR | O_CREAT | O_APPEND, 0644));
  ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
  auto k = std::unique_ptr<KeysFile>(new KeysFile(path, std::move(f)));
  k->committed_ = k->written_ = size;
  return k;
}

namespace {
// Calls fn(offset just past each '\n') until it returns false.
template <typename Fn>
Status scan_newlines(const io::File& f, uint64_t size, Fn fn) {
  std::vector<char> buf(size_t{1} << 20);
  for (uint64_t at = 0; at < size;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - at));
    ZREC_RETURN_IF_ERROR(f.pread_exact(buf.data(), n, at));
    for (size_t i = 0; i < n; ++i)
      if (buf[i] == '\n' && !fn(at + i + 1)) return Status::ok();
    at += n;
  }
  return Status::ok();
}
}  // namespace

Result<uint64_t> KeysFile::count_lines() const {
  uint64_t lines = 0;
  ZREC_RETURN_IF_ERROR(scan_newlines(file_, written_, [&](uint64_t) {
    ++lines;
    return true;
  }));
  return lines;
}

Status KeysFile::cut_to_lines(uint64_t n) {
  uint64_t lines = 0, end = 0;
  if (n > 0) {
    ZREC_RETURN_IF_ERROR(scan_newlines(file_, written_, [&](uint64_t past) {
      end = past;
      return ++lines < n;
    }));
  }
  ZREC_RETURN_IF_ERROR(file_.truncate(end));
  ZREC_RETURN_IF_ERROR(file_.sync());
  committed_ = written_ = end;
  return Status::ok();
}

Result<uint64_t> KeysFile::align(uint64_t length, const std::string& store) {
  ZREC_ASSIGN_OR_RETURN(uint64_t lines, count_lines());
  if (lines < length)
    return invalid_argument("keys file '" + path_ + "' has " + std::to_string(lines) + " lines but '" + store +
                            "' holds " + std::to_string(length) +
                            " records (give the keys file of the earlier runs, or none)");
  if (lines > length) ZREC_RETURN_IF_ERROR(cut_to_lines(length));
  return lines - length;
}

void KeysFile::add(std::string_view key) {
  append_line_field(buffer_, key, LineField::kWholeLine);
  buffer_ += '\n';
}

Status KeysFile::prepare() {
  if (buffer_.empty()) return Status::ok();
  ZREC_RETURN_IF_ERROR(file_.write_all(buffer_.data(), buffer_.size()));
  written_ += buffer_.size();
  buffer_.clear();
  return file_.sync();
}

void KeysFile::rollback() {
  buffer_.clear();
  if (written_ != committed_) (void)file_.truncate(committed_);
  written_ = committed_;
}

}  // namespace zrec::cli
