// Temporary sibling directories (store/temp_sibling.h): made, locked, marked, renamed
// into place or removed.
#include "store/temp_sibling.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>  // renameat2
#include <filesystem>
#include <vector>

#include "zrec/dataset.h"

#include "store/temp_files.h"

namespace zrec::store {

std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string parent_of(const std::string& path) {
  const std::filesystem::path target(path);
  return target.has_parent_path() ? target.parent_path().string() : ".";
}

std::string temp_prefix(const std::string& path, TempKind kind) {
  const std::string tag = kind == TempKind::kBuild ? ".zrec-tmp-" : ".zrec-join-";
  const size_t fixed = 1 + tag.size() + 6;  // "." + NAME + tag + "XXXXXX"
  const std::string name = std::filesystem::path(path).filename().string();
  return "." + name.substr(0, NAME_MAX - fixed) + tag;
}

Result<std::unique_ptr<TempSibling>> TempSibling::make(const std::string& path, TempKind kind) {
  const std::string parent = parent_of(path);
  std::string tmpl = join_path(parent, temp_prefix(path, kind) + "XXXXXX");
  if (!io::make_temp_dir(tmpl)) return io::errno_status(errno, "cannot create a directory in", parent);
  std::unique_ptr<TempSibling> t(new TempSibling(tmpl));
  // mkdtemp makes 0700; a store is an ordinary directory, so apply the umask to 0777.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  // A failure fails the build: exit 0 would leave DST with the wrong permissions.
  if (io::retry_eintr([&] { return ::chmod(tmpl.c_str(), 0777 & ~mask); }) != 0)
    return io::errno_status(errno, "cannot set the permissions of", tmpl);
  ZREC_ASSIGN_OR_RETURN(t->dir_, io::File::open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
  // A blocking lock: another run's cleanup (store/temp_files.h) may hold it for the
  // moment it takes to look inside, and leaves an unmarked directory this young alone.
  if (io::retry_eintr([&] { return ::flock(t->dir_.fd(), LOCK_EX); }) != 0)
    return io::errno_status(errno, "cannot lock", tmpl);
  ZREC_ASSIGN_OR_RETURN(io::File marker,
                        io::File::open(join_path(tmpl, kTempMarker), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644));
  return t;
}

TempSibling::~TempSibling() {
  if (kept_) return;
  // Only what this build made: the store's files, the marker, the directory.
  DIR* d = ::opendir(path_.c_str());
  if (d != nullptr) {
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    ::closedir(d);
    for (const auto& n : names) (void)::unlinkat(dir_.fd(), n.c_str(), 0);
  }
  (void)::rmdir(path_.c_str());
}

Status already_exists(const std::string& user_path, bool strict) {
  return Status(StatusCode::kAlreadyExists,
                "'" + user_path + (strict ? "' already exists" : "' already exists and is not an empty directory"));
}

Result<std::string> absent_build_target(const std::string& user_path) {
  std::string path = strip_trailing_slashes(user_path);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) return already_exists(user_path, true);
  if (errno != ENOENT) return io::errno_status(errno, "cannot stat", path);
  return path;
}

Status rename_no_replace(const std::string& from, const std::string& path, const std::string& user_path) {
  int r =
      io::retry_eintr([&] { return ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE); });
  if (r != 0 && (errno == EINVAL || errno == ENOSYS)) {
    // A file system without RENAME_NOREPLACE: check, then rename (a narrow race).
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) return already_exists(user_path, true);
    r = io::retry_eintr([&] { return ::rename(from.c_str(), path.c_str()); });
  }
  if (r != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR) return already_exists(user_path, true);
    return io::errno_status(errno, "cannot rename the new store to", path);
  }
  return Status::ok();
}

Status TempSibling::rename_to(const std::string& path, const std::string& user_path, bool no_replace) {
  const std::string marker = join_path(path_, kTempMarker);
  if (io::retry_eintr([&] { return ::unlink(marker.c_str()); }) != 0)
    return io::errno_status(errno, "cannot remove", marker);
  if (no_replace) {
    ZREC_RETURN_IF_ERROR(rename_no_replace(path_, path, user_path));
  } else if (io::retry_eintr([&] { return ::rename(path_.c_str(), path.c_str()); }) != 0) {
    if (errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR) return already_exists(user_path, false);
    return io::errno_status(errno, "cannot rename the new store to", path);
  }
  kept_ = true;
  return Status::ok();
}

void remove_abandoned_build_temps(const std::string& path, const WarningSink& warn) {
  remove_abandoned_temp_stores(parent_of(path), temp_prefix(path, TempKind::kBuild), warn);
}

void remove_abandoned_root_temps(const std::string& path, const WarningSink& warn) {
  TempStoreRules rules;
  rules.root = true;
  remove_abandoned_temp_stores(parent_of(path), temp_prefix(path, TempKind::kBuild), warn, rules);
}

void remove_abandoned_stream_temps(const std::string& root, const WarningSink& warn) {
  std::vector<std::string> prefixes;  // ".NAME.zrec-tmp-", once per NAME
  for (const auto& name : root_temporaries(root)) {
    const std::string prefix = name.substr(0, name.size() - 6);  // less mkdtemp's characters
    if (prefix.ends_with(".zrec-tmp-")) prefixes.push_back(prefix);
  }
  prefixes.erase(std::unique(prefixes.begin(), prefixes.end()), prefixes.end());
  TempStoreRules rules;
  rules.unmarked_ours = true;
  for (const auto& prefix : prefixes) remove_abandoned_temp_stores(root, prefix, warn, rules);
}

Status sync_parent(const std::string& path, const std::string& user_path) {
  Status s = io::sync_directory(parent_of(path));
  if (s.is_ok()) return s;
  return Status(s.code(), "'" + user_path + "' was created and is complete, but " + s.message() +
                              " (the parent directory's fsync), so after a system crash it may be missing");
}

}  // namespace zrec::store
