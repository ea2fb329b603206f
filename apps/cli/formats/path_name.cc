// The parts of a path (path_name.h).
#include "cli/formats/path_name.h"

#include <utility>

#include "zrec/remote.h"

namespace zrec::cli {

std::string strip_trailing_slashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

std::string base_name(std::string path) {
  // A URL's name is the last word of its path, never of its query or fragment (a token).
  if (is_url(path)) path = path.substr(0, path.find_first_of("?#", path.find("://") + 3));
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
