// Cleaning up abandoned temporaries, only where they provably are zrec's.
#include "store/temp_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "format/layout.h"
#include "io/file.h"
#include "store/store_files.h"
#include "zrec/warning.h"

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

bool is_store_file_name(const std::string& name) {
  if (name == format::kMetaFile || name == format::kDictFile || name == kTempMarker) return true;
  for (uint32_t s = 0; s < format::kMaxShards; ++s)
    if (name == format::data_file_name(s)) return true;
  return false;
}

// Why the directory open as `dir` is not provably an abandoned zrec temporary store,
// or nullopt; fills `files` with the names to remove.
std::optional<std::string> not_ours(int dir, std::vector<std::string>& files) {
  struct stat st;
  if (::fstat(dir, &st) != 0) return std::string("cannot stat it: ") + std::strerror(errno);
  if (st.st_uid != ::geteuid()) return std::string("it belongs to another user (uid ") + std::to_string(st.st_uid) + ")";
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
    if (!is_store_file_name(name)) {
      why = "it holds '" + name + "', which is not a store file";
    } else if (::fstatat(dir, name.c_str(), &fs, AT_SYMLINK_NOFOLLOW) != 0) {
      why = "cannot stat '" + name + "': " + std::strerror(errno);
    } else if (!S_ISREG(fs.st_mode) || fs.st_nlink != 1) {
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

void leave(const std::string& path, const std::string& why) {
  warn("leaving '" + path + "' in place: it is named like a zrec temporary but " + why +
       " (remove it yourself if it is not needed)");
}

}  // namespace

void remove_abandoned_temp_stores(const std::string& parent, const std::string& prefix) {
  for (const auto& name : candidates(parent, prefix)) {
    const std::string p = join_path(parent, name);
    auto f = io::File::open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!f.is_ok()) {
      if (f.status().code() != StatusCode::kNotFound) leave(p, "cannot be opened as a directory");
      continue;
    }
    // A live build holds this lock from before it writes the marker until its rename.
    if (io::retry_eintr([&] { return ::flock(f->fd(), LOCK_EX | LOCK_NB); }) != 0) continue;
    std::vector<std::string> files;
    if (auto why = not_ours(f->fd(), files)) {
      // An empty directory may be a build between mkdtemp and its lock: not a loss, not news.
      if (!files.empty() || why->rfind("it has no ", 0) != 0) leave(p, *why);
      continue;
    }
    bool removed = true;
    for (const auto& file : files) removed = io::retry_eintr([&] { return ::unlinkat(f->fd(), file.c_str(), 0); }) == 0 && removed;
    if (!removed || io::retry_eintr([&] { return ::rmdir(p.c_str()); }) != 0) leave(p, std::string("could not be removed: ") + std::strerror(errno));
  }
}

void remove_abandoned_temp_dicts(const std::string& parent, const std::string& prefix) {
  for (const auto& name : candidates(parent, prefix)) {
    const std::string p = join_path(parent, name);
    auto f = io::File::open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!f.is_ok()) {
      if (f.status().code() != StatusCode::kNotFound) leave(p, "cannot be opened as a file");
      continue;
    }
    // A live train-dict holds this lock from before it writes its first byte.
    if (io::retry_eintr([&] { return ::flock(f->fd(), LOCK_EX | LOCK_NB); }) != 0) continue;
    struct stat st;
    unsigned char head[sizeof kDictMagic] = {};
    std::optional<std::string> why;
    if (::fstat(f->fd(), &st) != 0)
      why = std::string("cannot stat it: ") + std::strerror(errno);
    else if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
      why = "it is not a regular file with one link";
    else if (st.st_uid != ::geteuid())
      why = "it belongs to another user (uid " + std::to_string(st.st_uid) + ")";
    else if (!f->pread_exact(head, sizeof head, 0).is_ok() || std::memcmp(head, kDictMagic, sizeof head) != 0)
      why = "it does not start like a zstd dictionary";
    if (why) {
      leave(p, *why);
      continue;
    }
    if (io::retry_eintr([&] { return ::unlink(p.c_str()); }) != 0) leave(p, std::string("could not be removed: ") + std::strerror(errno));
  }
}

}  // namespace zrec::store
