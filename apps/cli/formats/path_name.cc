// The parts of a path (path_name.h).
#include "cli/formats/path_name.h"

#include <utility>

namespace zrec::cli {

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string base_name(std::string path) {
  path = strip_trailing_slashes(std::move(path));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string parent_directory(std::string path) {
  path = strip_trailing_slashes(std::move(path));
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace zrec::cli
