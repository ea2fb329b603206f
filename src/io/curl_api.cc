// libcurl() (see curl_api.h).
#include "io/curl_api.h"

#include <dlfcn.h>

#include <string>

namespace zrec::io {

namespace {

Result<LibCurl> load() {
  // ZREC_CURL_SONAME: the soname of the libcurl zrec was built against (CMake reads it
  // from the library), so the loaded one has the ABI of the headers.
  void* lib = ::dlopen(ZREC_CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return unsupported(std::string("cannot load libcurl (") + ZREC_CURL_SONAME +
                       "), which reading a store by URL needs: " + (why != nullptr ? why : "unknown reason"));
  }
  LibCurl lc;
#define ZREC_CURL_RESOLVE(name)                                       \
  lc.name = reinterpret_cast<decltype(lc.name)>(::dlsym(lib, #name)); \
  if (lc.name == nullptr)                                             \
    return unsupported(std::string("cannot load libcurl (") + ZREC_CURL_SONAME + "): it has no " #name);
  ZREC_CURL_FUNCTIONS(ZREC_CURL_RESOLVE)
#undef ZREC_CURL_RESOLVE
  // Once, before any thread makes a handle (curl_global_init is not thread-safe; the
  // static in libcurl() runs this once).
  if (lc.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return unsupported(std::string("cannot initialize libcurl (") + ZREC_CURL_SONAME + ")");
  return lc;  // the library stays loaded until the process ends
}

}  // namespace

Result<const LibCurl*> libcurl() {
  static const Result<LibCurl> loaded = load();
  if (!loaded.is_ok()) return loaded.status();
  return &loaded.value();
}

}  // namespace zrec::io
