#include "cli/options/many_paths.h"

#include <cstdio>

#include "cli/formats/printable.h"

namespace zrec::cli {

Status for_each_path(const std::string& command, const std::vector<std::string>& paths,
                     const std::function<Status(const std::string&)>& one,
                     const std::function<int(const Status&)>& exit_code) {
  Status worst;
  for (const std::string& path : paths) {
    Status s = one(path);
    if (s.is_ok()) continue;
    if (s.code() == StatusCode::kCancelled) return s;
    if (worst.is_ok() || exit_code(s) >= exit_code(worst)) std::swap(worst, s);
    // The one not kept is reported here; the kept one is the command's own error.
    if (!s.is_ok()) std::fprintf(stderr, "zrec %s: %s\n", command.c_str(), printable(s.message()).c_str());
  }
  return worst;
}

}  // namespace zrec::cli
