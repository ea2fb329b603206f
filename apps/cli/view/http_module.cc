// load_http_module (see http_module.h).
#include "cli/view/http_module.h"

#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <string>
#include <vector>

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
    void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (module == nullptr) {
      const char* why = ::dlerror();
      reasons += "; " + path + ": " + (why != nullptr ? why : "cannot load");
      continue;
    }
    auto abi = reinterpret_cast<TransportAbiFunction>(::dlsym(module, kTransportAbiSymbol));
    auto serve = reinterpret_cast<ServeFunction>(::dlsym(module, kServeSymbol));
    if (abi == nullptr || serve == nullptr || abi() != kTransportAbi)
      return unsupported("'" + path +
                         "' is not the HTTP server module of this zrec build (rebuild and reinstall zrec)");
    return serve;
  }
  if (reasons.empty())
    return not_found("zrec view needs its HTTP server module " + std::string(kModuleName) + ", which is not in '" +
                     dir + "' nor in '" + dir + "/" + ZREC_VIEW_MODULE_DIR + "' (reinstall zrec)");
  return unsupported("cannot load zrec view's HTTP server module" + reasons);
}

}  // namespace zrec::cli::view
