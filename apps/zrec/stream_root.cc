#include "zrec/stream_root.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include "format/layout.h"
#include "store/store_files.h"

namespace zrec::cli {

namespace {

bool is_build_leftover(const std::string& name) {
  return name.starts_with('.') && name.find(".zrec-tmp-") != std::string::npos;
}

}  // namespace

bool is_store_dir(const std::string& path) {
  struct stat st;
  return ::stat(store::join_path(path, format::kMetaFile).c_str(), &st) == 0;
}

std::vector<std::string> child_stores(const std::string& root) {
  std::vector<std::string> out;
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || is_build_leftover(name)) continue;
    if (is_store_dir(store::join_path(root, name))) out.push_back(name);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace zrec::cli
