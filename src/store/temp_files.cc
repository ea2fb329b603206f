// Cleaning up abandoned temporaries, only where they provably are zrec's.
#include "store/temp_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "zrec/dataset.h"

#include "format/layout.h"
#include "store/store_files.h"
#include "store/temp_sibling.h"
#include "store/warn.h"
#include "zrec_support/file.h"

namespace zrec::store {
namespace {

// Names in `parent` that are `prefix` followed by exactly the 6 characters mkdtemp or
// mkstemp put there.
std::vector<std::string> candidates(const std::string& parent, const std::string& prefix) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(parent.c_str());
  if (dir == nullptr) return names;
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name.size() == prefix.size() + 6 && name.compare(0, prefix.size(), prefix) == 0) names.push_back(name);
  }
  ::closedir(dir);
  return names;
}

bool is_data_file_name(const std::string& name) {
  for (uint32_t s = 0; s < format::kMaxShards; ++s)
    if (name == format::data_file_name(s)) return true;
  return false;
}

bool is_store_file_name(const std::string& name) {
  return name == format::kMetaFile || name == format::kDictFile || name == kCodecAutoFile || name == kTempMarker ||
         is_data_file_name(name);
}

// A file a root holds besides its streams: its marker, the marker's temporaries and its
// card (a root being built, build_root, holds them too).
bool is_root_file_name(const std::string& name) {
  return name == kRootMarkerFile || name == kCardFile || name.starts_with(".zrec-root.tmp-");
}

std::optional<std::string> not_ours(int dir, const TempStoreRules& rules, std::vector<std::string>& files,
                                    std::vector<std::string>& dirs);

// Why the directory `name` inside a root's temporary (a stream, built or being built) is
// not provably zrec's, or nullopt; adds its files (as NAME/FILE) to `files`. Its own
// marker is not asked for: a built stream's was removed by its rename.
std::optional<std::string> stream_not_ours(int root, const std::string& name, std::vector<std::string>& files) {
  const int fd = io::retry_eintr([&] { return ::openat(root, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW); });
  if (fd < 0) return "cannot open '" + name + "': " + std::strerror(errno);
  io::File sub(fd, name);
  std::vector<std::string> inner, none;
  if (auto why = not_ours(sub.fd(), {}, inner, none); why && !why->starts_with("it has no "))
    return "'" + name + "' is no stream: " + *why;
  for (const auto& f : inner) files.push_back(name + "/" + f);
  return std::nullopt;
}

// Why the directory open as `dir` is not provably an abandoned zrec temporary store (or,
// with rules.root, root), or nullopt; fills `files` with the names to remove, and `dirs`
// with the directories (a root's streams) to remove after them.
std::optional<std::string> not_ours(int dir, const TempStoreRules& rules, std::vector<std::string>& files,
                                    std::vector<std::string>& dirs) {
  struct stat st;
  if (::fstat(dir, &st) != 0) return std::string("cannot stat it: ") + std::strerror(errno);
  if (st.st_uid != ::geteuid())
    return std::string("it belongs to another user (uid ") + std::to_string(st.st_uid) + ")";
  const int fd = ::dup(dir);
  DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
  if (d == nullptr) {
    if (fd >= 0) ::close(fd);
    return std::string("cannot list it: ") + std::strerror(errno);
  }
  std::optional<std::string> why;
  bool marker = false;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    struct stat fs;
    const bool stated = ::fstatat(dir, name.c_str(), &fs, AT_SYMLINK_NOFOLLOW) == 0;
    if (rules.root && stated && S_ISDIR(fs.st_mode)) {
      why = stream_not_ours(dir, name, files);
      if (why) break;
      dirs.push_back(name);
      continue;
    }
    if (!is_store_file_name(name) && !(rules.root && is_root_file_name(name)) &&
        !(rules.extra_file && rules.extra_file(name))) {
      why = "it holds '" + name + "', which is not a store file";
    } else if (!stated) {
      why = "cannot stat '" + name + "': " + std::strerror(errno);
    } else if (!S_ISREG(fs.st_mode) || (fs.st_nlink != 1 && !is_data_file_name(name))) {
      // A data file may have more links: a join with JoinOptions::link_first (concat
      // --consume) links the first part's into DEST's temporary, and removing this name
      // leaves that part's bytes (it keeps them under its own name). Left in place, the
      // extra link made the part unwritable and no rerun removed it.
      why = "'" + name + "' is not a regular file with one link";
    } else if (fs.st_uid != ::geteuid()) {
      why = "'" + name + "' belongs to another user (uid " + std::to_string(fs.st_uid) + ")";
    } else {
      marker = marker || name == kTempMarker;
      files.push_back(name);
      continue;
    }
    break;
  }
  ::closedir(d);
  if (!why && !marker) why = std::string("it has no ") + kTempMarker + " marker";
  return why;
}

// How long an empty, unmarked temporary directory is given: a live build locks it and
// writes its marker within moments of mkdtemp, so one older than this was abandoned.
constexpr int kUnmarkedGraceSeconds = 60;

bool older_than(int fd, int seconds) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return false;
  return ::time(nullptr) - st.st_mtime > seconds;
}

// What a cleanup says about a candidate it leaves in place, or nullopt.
using Warning = std::optional<std::string>;

Warning leave(const std::string& path, const std::string& why) {
  return "leaving '" + path + "' in place: it is named like a zrec temporary but " + why +
         " (remove it yourself if it is not needed)";
}

// Opens each candidate with `flags` and hands it to `handle` while holding its lock;
// skips one whose lock a live writer holds. One that cannot be opened (other than
// gone meanwhile) is left with a warning that it cannot be opened as `opened_as`.
// Warnings are given after the lock is let go: writing one may block on a full stderr
// pipe, and a build that has just made that temporary waits for its lock.
void for_each_unlocked(const std::string& parent, const std::string& prefix, int flags, const char* opened_as,
                       const WarningSink& sink,
                       const std::function<Warning(const std::string& path, const io::File& f)>& handle) {
  for (const auto& name : candidates(parent, prefix)) {
    const std::string p = join_path(parent, name);
    Warning said;
    {
      auto f = io::File::open(p, flags);
      if (!f.is_ok()) {
        if (f.status().code() != StatusCode::kNotFound)
          said = leave(p, std::string("cannot be opened as ") + opened_as);
      } else if (io::retry_eintr([&] { return ::flock(f->fd(), LOCK_EX | LOCK_NB); }) == 0) {
        said = handle(p, *f);
      }
    }
    if (said) warn(sink, *said);
  }
}

Warning remove_if_abandoned_store(const std::string& p, const io::File& dir, const TempStoreRules& rules) {
  if (rules.in_use && rules.in_use(p)) return std::nullopt;
  std::vector<std::string> files, dirs;
  if (auto why = not_ours(dir.fd(), rules, files, dirs);
      why && !(rules.unmarked_ours && why->starts_with("it has no "))) {
    const bool empty_and_ours = files.empty() && why->starts_with("it has no ");
    if (!empty_and_ours) return leave(p, *why);
    if (older_than(dir.fd(), kUnmarkedGraceSeconds)) {
      // A build killed between mkdtemp and its marker: rmdir removes only an empty
      // directory, so nothing can be lost.
      if (io::retry_eintr([&] { return ::rmdir(p.c_str()); }) != 0 && errno != ENOTEMPTY && errno != ENOENT)
        return leave(p, std::string("could not be removed: ") + std::strerror(errno));
      return std::nullopt;
    }
    return "leaving '" + p + "' in place for now: it is an empty zrec temporary without its " + kTempMarker +
           " marker, which a build that is just starting also is; a run " + std::to_string(kUnmarkedGraceSeconds) +
           " s after it was made removes it";
  }
  bool removed = true;
  for (const auto& file : files)
    removed = io::retry_eintr([&] { return ::unlinkat(dir.fd(), file.c_str(), 0); }) == 0 && removed;
  for (const auto& sub : dirs)
    removed = io::retry_eintr([&] { return ::unlinkat(dir.fd(), sub.c_str(), AT_REMOVEDIR); }) == 0 && removed;
  if (!removed || io::retry_eintr([&] { return ::rmdir(p.c_str()); }) != 0)
    return leave(p, std::string("could not be removed: ") + std::strerror(errno));
  return std::nullopt;
}

// A temporary file starting with `magic` (what it is is `what`, for the warnings).
Warning remove_if_abandoned_file(const std::string& p, const io::File& f, std::string_view magic, const char* what) {
  struct stat st;
  std::string head(magic.size(), '\0');
  std::optional<std::string> why;
  if (::fstat(f.fd(), &st) != 0) why = std::string("cannot stat it: ") + std::strerror(errno);
  else if (!S_ISREG(st.st_mode) || st.st_nlink != 1) why = "it is not a regular file with one link";
  else if (st.st_uid != ::geteuid()) why = "it belongs to another user (uid " + std::to_string(st.st_uid) + ")";
  else if (st.st_size == 0 && !older_than(f.fd(), kUnmarkedGraceSeconds))
    why = std::string("it is empty, which a ") + what + " save that is just starting also is (a run " +
          std::to_string(kUnmarkedGraceSeconds) + " s after it was made removes it)";
  else if (st.st_size != 0 && (!f.pread_exact(head.data(), head.size(), 0).is_ok() || head != magic))
    why = std::string("it does not start like a ") + what;
  if (why) return leave(p, *why);
  if (io::retry_eintr([&] { return ::unlink(p.c_str()); }) != 0)
    return leave(p, std::string("could not be removed: ") + std::strerror(errno));
  return std::nullopt;
}

}  // namespace

void remove_abandoned_temp_stores(const std::string& parent, const std::string& prefix, const WarningSink& warn,
                                  const TempStoreRules& rules) {
  // A live build holds the lock from before it writes the marker until its rename.
  for_each_unlocked(
      parent, prefix, O_RDONLY | O_DIRECTORY | O_NOFOLLOW, "a directory", warn,
      [&](const std::string& p, const io::File& dir) { return remove_if_abandoned_store(p, dir, rules); });
}

void remove_abandoned_temp_files(const std::string& parent, const std::string& prefix, std::string_view magic,
                                 const char* what, const WarningSink& warn) {
  // A live writer (train-dict, plan_join) holds the lock from before it writes its first byte.
  for_each_unlocked(
      parent, prefix, O_RDONLY | O_NOFOLLOW | O_NONBLOCK, "a file", warn,
      [&](const std::string& p, const io::File& f) { return remove_if_abandoned_file(p, f, magic, what); });
}

Result<io::File> write_locked_temp(std::string& tmpl, std::string_view bytes, const char* cannot_create,
                                   const std::string& where) {
  const int fd = io::make_temp_file(tmpl);
  if (fd < 0) return io::errno_status(errno, cannot_create, where);
  io::File f(fd, tmpl);
  Status s;
  if (io::retry_eintr([&] { return ::flock(fd, LOCK_EX); }) != 0) s = io::errno_status(errno, "cannot lock", tmpl);
  if (s.is_ok() && io::retry_eintr([&] { return ::fchmod(fd, 0644); }) != 0)
    s = io::errno_status(errno, "cannot set the mode of", tmpl);
  if (s.is_ok()) s = f.pwrite_all(bytes.data(), bytes.size(), 0);
  if (s.is_ok()) s = f.sync();
  if (!s.is_ok()) {
    (void)::unlink(tmpl.c_str());
    return s;
  }
  return f;
}

Status write_file_whole(const std::string& path, std::string_view bytes, std::string_view magic, const char* what,
                        bool replace, const WarningSink& warn) {
  const std::filesystem::path target(path);
  const std::string parent = target.has_parent_path() ? target.parent_path().string() : ".";
  const std::string prefix = target.filename().string().substr(0, NAME_MAX - 11) + ".tmp-";
  remove_abandoned_temp_files(parent, prefix, magic, what, warn);
  std::string tmpl = join_path(parent, prefix + "XXXXXX");
  ZREC_ASSIGN_OR_RETURN(io::File f, write_locked_temp(tmpl, bytes, "cannot create a file next to", path));
  Status s;
  if (replace && io::retry_eintr([&] { return ::rename(tmpl.c_str(), path.c_str()); }) != 0)
    s = io::errno_status(errno, "cannot rename to", path);
  if (s.is_ok() && !replace) s = rename_no_replace(tmpl, path, path);
  if (!s.is_ok()) {
    (void)::unlink(tmpl.c_str());
    return s;
  }
  return sync_parent(path, path);
}

}  // namespace zrec::store
