#include "io/location.h"

#include <dirent.h>
#include <fcntl.h>

#include "io/remote_file.h"

namespace zrec::io {

Location::Location(std::string path_or_url) : path_(std::move(path_or_url)), remote_(is_url(path_)) {}

std::string Location::shown() const { return remote_ ? redact_url(path_) : path_; }

Location Location::child(const std::string& name) const {
  if (remote_ && !is_s3_url(path_)) {
    const size_t query = path_.find_first_of("?#");
    const std::string base = path_.substr(0, query);
    const std::string joined = (base.ends_with('/') ? base : base + "/") + percent_encode(name, false);
    return Location(query == std::string::npos ? joined : joined + path_.substr(query), true);
  }
  if (!path_.empty() && path_.back() == '/') return Location(path_ + name, remote_);
  return Location(path_ + "/" + name, remote_);
}

Result<std::unique_ptr<const Readable>> Location::open_for_reading(uint64_t prefetch, const Context& ctx) const {
  if (remote_) return RemoteFile::open(path_, prefetch, ctx);
  ZREC_ASSIGN_OR_RETURN(File f, File::open(path_, O_RDONLY));
  return std::unique_ptr<const Readable>(new File(std::move(f)));
}

Result<std::unique_ptr<const Readable>> Location::open_if_present(
    uint64_t prefetch, const Context& ctx, const std::function<Status(const std::string&)>& not_regular) const {
  if (remote_) {
    auto f = RemoteFile::open(path_, prefetch, ctx);
    if (!f.is_ok() && f.status().code() == StatusCode::kNotFound) return std::unique_ptr<const Readable>();
    if (!f.is_ok()) return f.status();
    return std::unique_ptr<const Readable>(std::move(f).value());
  }
  ZREC_ASSIGN_OR_RETURN(std::optional<File> f, open_local_regular(O_RDONLY, not_regular));
  if (!f) return std::unique_ptr<const Readable>();
  return std::unique_ptr<const Readable>(new File(std::move(*f)));
}

Result<std::optional<File>> Location::open_local_regular(int flags,
                                                         const std::function<Status(const std::string&)>& not_regular,
                                                         struct stat* st) const {
  ZREC_RETURN_IF_ERROR(local_path("files").status());
  const int fd = retry_eintr([&] { return ::open(path_.c_str(), flags | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK); });
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<File>();
    if (errno == ELOOP) return not_regular(path_);
    return errno_status(errno, "cannot open", path_);
  }
  File f(fd, path_);
  struct stat own;
  if (st == nullptr) st = &own;
  if (::fstat(fd, st) != 0) return errno_status(errno, "cannot stat", path_);
  if (!S_ISREG(st->st_mode)) return not_regular(path_);
  return std::optional<File>(std::move(f));
}

Result<std::unique_ptr<const Readable>> open_for_reading(const std::string& path_or_url, uint64_t prefetch,
                                                         const Context& ctx) {
  return Location(path_or_url).open_for_reading(prefetch, ctx);
}

std::vector<std::string> Location::entry_names() const {
  std::vector<std::string> names;
  if (remote_) return names;
  DIR* dir = ::opendir(path_.c_str());
  if (dir == nullptr) return names;
  while (dirent* e = ::readdir(dir)) {
    const std::string_view name = e->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

Result<std::string> Location::local_path(const std::string& what) const {
  if (remote_) return invalid_argument("'" + shown() + "' is a URL; zrec writes only local " + what);
  return path_;
}

}  // namespace zrec::io
