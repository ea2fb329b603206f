// Refuses output paths that resolve into the stores a command reads or writes.
#include "cli/os/output_guard.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>

#include "cli/formats/path_name.h"

namespace zrec::cli {

namespace {

struct FileId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FileId&) const = default;
};

bool file_id(const std::string& path, FileId& id) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return false;
  id = {st.st_dev, st.st_ino};
  return true;
}

// A store directory with the identities of the entries in it, or a plain input file.
struct Guarded {
  std::string path;
  bool is_dir = false;
  FileId self{};
  std::vector<FileId> files;
};

std::vector<Guarded> identify(const std::vector<std::string>& paths) {
  std::vector<Guarded> out;
  for (const auto& p : paths) {
    Guarded g;
    g.path = p;
    struct stat st;
    if (::stat(p.c_str(), &st) != 0) continue;  // not there: nothing to overwrite
    g.self = {st.st_dev, st.st_ino};
    g.is_dir = S_ISDIR(st.st_mode);
    if (g.is_dir) {
      std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(p.c_str()), ::closedir);
      while (dir != nullptr) {
        const dirent* e = ::readdir(dir.get());
        if (e == nullptr) break;
        FileId id;
        if (std::string_view(e->d_name) != "." && std::string_view(e->d_name) != ".." &&
            file_id(p + "/" + e->d_name, id))
          g.files.push_back(id);
      }
    }
    out.push_back(std::move(g));
  }
  return out;
}

// The store `output` lands in or on, or nullptr. Follows a symlink at `output` itself
// (open(O_CREAT) would create its target), up to 40 links as the kernel does.
const Guarded* landing_store(const std::string& output, const std::vector<Guarded>& stores, int links_left) {
  FileId id;
  if (file_id(output, id))
    for (const Guarded& g : stores) {
      if (id == g.self) return &g;
      for (const FileId& f : g.files)
        if (id == f) return &g;
    }
  char resolved[PATH_MAX];
  if (::realpath(parent_directory(output).c_str(), resolved) != nullptr) {
    for (std::string dir = resolved;; dir = parent_directory(dir)) {
      if (file_id(dir, id))
        for (const Guarded& g : stores)
          if (g.is_dir && id == g.self) return &g;
      if (dir == "/") break;
    }
  }
  struct stat st;
  if (links_left > 0 && ::lstat(output.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    char target[PATH_MAX];
    const ssize_t n = ::readlink(output.c_str(), target, sizeof target - 1);
    if (n > 0) {
      std::string t(target, static_cast<size_t>(n));
      if (t[0] != '/') t = parent_directory(output) + "/" + t;
      return landing_store(t, stores, links_left - 1);
    }
  }
  return nullptr;
}

}  // namespace

Status refuse_output_into_stores(const std::string& output, const std::string& option,
                                 const std::vector<std::string>& stores) {
  if (output.empty() || output == "-") return Status::ok();
  const std::vector<Guarded> guarded = identify(stores);
  const Guarded* hit = landing_store(output, guarded, 40);
  if (hit == nullptr) return Status::ok();
  if (!hit->is_dir)
    return invalid_argument(option + " '" + output + "' is the input file '" + hit->path +
                            "'; choose another output path");
  return invalid_argument(option + " '" + output + "' is inside store '" + hit->path +
                          "', which this command reads or writes; choose a path outside it");
}

Status refuse_existing_destination(const std::string& dst) {
  struct stat st;
  if (::lstat(strip_trailing_slashes(dst).c_str(), &st) == 0)
    return Status(StatusCode::kAlreadyExists, "'" + dst + "' already exists; choose a new destination");
  return Status::ok();
}

}  // namespace zrec::cli
