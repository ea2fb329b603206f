// KeysFile (see keys_file.h).
#include "cli/import/keys_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <spdlog/spdlog.h>

#include "cli/formats/line_field.h"
#include "cli/os/output_guard.h"
#include "cli/os/side_file.h"

namespace zrec::cli {

Result<std::unique_ptr<KeysFile>> KeysFile::open(const std::string& path, const std::string& store) {
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(path, "--keys", {store}));
  // O_EXCL first, to know whether this run made the file; an existing one is a side
  // file (cli/os/side_file.h): opened without blocking, refused unless regular.
  bool created = true;
  int fd =
      io::retry_eintr([&] { return ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644); });
  io::File f;
  if (fd < 0 && errno == EEXIST) {
    created = false;
    ZREC_ASSIGN_OR_RETURN(f, open_side_file(path, "--keys", O_RDWR | O_APPEND));
  } else if (fd < 0) {
    return io::errno_status(errno, "cannot open keys file", path);
  } else {
    f = io::File(fd, path);
  }
  ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
  auto k = std::unique_ptr<KeysFile>(new KeysFile(path, std::move(f)));
  k->committed_ = k->written_ = size;
  k->created_ = created;
  return k;
}

void KeysFile::remove_created() {
  if (!created_) return;
  if (written_ != 0) {
    spdlog::warn("left the keys file '{}' this run created: it holds keys already", path_);
    return;
  }
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT)
    spdlog::warn("left the keys file '{}' this run created: {}", path_, std::strerror(errno));
  created_ = false;
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

Result<std::string> KeysFile::differs_at(uint64_t index, std::string_view key) {
  if (index < next_line_) next_line_ = next_offset_ = 0;
  std::string line;
  bool in_line = false;
  for (;;) {
    if (next_offset_ >= committed_) return std::string("(none)");
    if (next_offset_ < window_offset_ || next_offset_ >= window_offset_ + window_.size()) {
      window_offset_ = next_offset_;
      window_.resize(static_cast<size_t>(std::min<uint64_t>(size_t{1} << 20, committed_ - next_offset_)));
      ZREC_RETURN_IF_ERROR(file_.pread_exact(window_.data(), window_.size(), window_offset_));
    }
    const std::string_view rest = std::string_view(window_).substr(static_cast<size_t>(next_offset_ - window_offset_));
    const size_t nl = rest.find('\n');
    const std::string_view piece = rest.substr(0, nl);
    if (next_line_ == index) {
      line += piece;
      in_line = true;
    }
    next_offset_ += piece.size();
    if (nl == std::string_view::npos) continue;  // the line goes on in the next window
    ++next_offset_;
    if (next_line_++ != index) continue;
    std::string want;
    append_line_field(want, key, LineField::kWholeLine);
    return in_line && line == want ? std::string() : line;
  }
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
