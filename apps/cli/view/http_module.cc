// load_http_module (see http_module.h).
#include "cli/view/http_module.h"

#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

#include "zrec_support/shared_library.h"

namespace zrec::cli::view {

namespace {

constexpr const char* kModuleName = "zrec-view-http.so";

// The directory of the running executable, from /proc/self/exe (links resolved).
std::string executable_dir() {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

}  // namespace

Result<ServeFunction> load_http_module() {
  const std::string dir = executable_dir();
  const std::vector<std::string> candidates = {dir + "/" + kModuleName,
                                               dir + "/" + ZREC_VIEW_MODULE_DIR + "/" + kModuleName};
  std::string reasons;
  for (const std::string& path : candidates) {
    if (::access(path.c_str(), F_OK) != 0) continue;
    auto module = SharedLibrary::open(path, "zrec view's HTTP server module", "zrec view needs");
    if (!module.is_ok()) {
      reasons += "; " + module.status().message();
      continue;
    }
    auto abi = module->function<TransportAbiFunction>(kTransportAbiSymbol);
    auto serve = module->function<ServeFunction>(kServeSymbol);
    if (!abi.is_ok() || !serve.is_ok() || (*abi)() != kTransportAbi)
      return unsupported("'" + path +
                         "' is not the HTTP server module of this zrec build (rebuild and reinstall zrec)");
    return *serve;
  }
  if (reasons.empty())
    return not_found("zrec view needs its HTTP server module " + std::string(kModuleName) + ", which is not in '" +
                     dir + "' nor in '" + dir + "/" + ZREC_VIEW_MODULE_DIR + "' (reinstall zrec)");
  return unsupported("cannot load zrec view's HTTP server module" + reasons);
}

}  // namespace zrec::cli::view
