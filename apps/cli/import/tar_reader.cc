// TarReader: libarchive's reader, one input after another (see tar_reader.h).
#include "cli/import/tar_reader.h"

#include <sys/stat.h>

#include "cli/os/interrupt.h"
#include "cli/os/libarchive_api.h"

namespace zrec::cli {

namespace {
// Read size of each input: large enough that a pipe is drained in few system calls.
constexpr size_t kBlockBytes = size_t{1} << 20;
}  // namespace

TarReader::TarReader(std::vector<std::string> inputs) : inputs_(std::move(inputs)) {
  if (inputs_.empty()) inputs_.push_back("-");
}

TarReader::~TarReader() {
  if (archive_ != nullptr) la_->archive_read_free(archive_);
}

Status TarReader::error(const std::string& what) const {
  if (interrupted()) return cancelled("interrupted");
  const char* why = archive_ != nullptr ? la_->archive_error_string(archive_) : nullptr;
  std::string where = current_ == "-" ? "stdin" : "'" + current_ + "'";
  if (!member_path_.empty()) where += " (member '" + member_path_ + "')";
  return io_error("cannot " + what + " tar " + where + ": " + (why != nullptr ? why : "unknown error"));
}

Status TarReader::open_next_input() {
  if (archive_ != nullptr) {
    done_inputs_bytes_ += static_cast<uint64_t>(la_->archive_filter_bytes(archive_, -1));
    la_->archive_read_free(archive_);
    archive_ = nullptr;
  }
  if (la_ == nullptr) {
    ZREC_ASSIGN_OR_RETURN(la_, libarchive());
  }
  current_ = inputs_[next_input_++];
  member_path_.clear();
  archive_ = la_->archive_read_new();
  if (archive_ == nullptr) return io_error("cannot start libarchive (out of memory)");
  la_->archive_read_support_filter_all(archive_);
  la_->archive_read_support_format_tar(archive_);
  // `cat a.tar b.tar | ...`: keep reading past the first end-of-archive blocks.
  la_->archive_read_set_options(archive_, "tar:read_concatenated_archives");
  const int rc = current_ == "-" ? la_->archive_read_open_fd(archive_, 0, kBlockBytes)
                                 : la_->archive_read_open_filename(archive_, current_.c_str(), kBlockBytes);
  if (rc != ARCHIVE_OK) return error("open");
  return Status::ok();
}

Result<bool> TarReader::next(TarMember& member) {
  for (;;) {
    if (archive_ == nullptr) {
      if (next_input_ >= inputs_.size()) return false;
      ZREC_RETURN_IF_ERROR(open_next_input());
    }
    struct archive_entry* entry = nullptr;
    const int rc = la_->archive_read_next_header(archive_, &entry);
    if (rc == ARCHIVE_EOF) {
      done_inputs_bytes_ += static_cast<uint64_t>(la_->archive_filter_bytes(archive_, -1));
      la_->archive_read_free(archive_);
      archive_ = nullptr;
      if (next_input_ >= inputs_.size()) return false;
      continue;
    }
    if (rc < ARCHIVE_WARN) return error("read");
    const char* path = la_->archive_entry_pathname(entry);
    member_path_ = path != nullptr ? path : "";
    member.path = member_path_;
    member.regular = la_->archive_entry_filetype(entry) == AE_IFREG && la_->archive_entry_hardlink(entry) == nullptr;
    member.directory = la_->archive_entry_filetype(entry) == AE_IFDIR;
    member.size = la_->archive_entry_size_is_set(entry) ? static_cast<uint64_t>(la_->archive_entry_size(entry)) : 0;
    member.input = current_;
    return true;
  }
}

Result<uint64_t> TarReader::read(uint8_t* dst, uint64_t n) {
  if (archive_ == nullptr) return uint64_t{0};
  const la_ssize_t got = la_->archive_read_data(archive_, dst, n);
  if (got < 0) return error("read");
  return static_cast<uint64_t>(got);
}

uint64_t TarReader::input_bytes() const {
  return done_inputs_bytes_ +
         (archive_ != nullptr ? static_cast<uint64_t>(la_->archive_filter_bytes(archive_, -1)) : 0);
}

}  // namespace zrec::cli
