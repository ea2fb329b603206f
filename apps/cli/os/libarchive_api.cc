// libarchive() (see libarchive_api.h).
#include "cli/os/libarchive_api.h"

#include <dlfcn.h>

#include <string>

namespace zrec::cli {

namespace {

Result<LibArchive> load() {
  // ZREC_LIBARCHIVE_SONAME: the soname of the libarchive zrec was built against (CMake
  // reads it from the library), so the loaded one has the ABI of the headers.
  void* lib = ::dlopen(ZREC_LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = ::dlerror();
    return unsupported(std::string("cannot load libarchive (") + ZREC_LIBARCHIVE_SONAME +
                       "), which tar input and output need: " + (why != nullptr ? why : "unknown reason"));
  }
  LibArchive la;
#define ZREC_LIBARCHIVE_RESOLVE(name)                                 \
  la.name = reinterpret_cast<decltype(la.name)>(::dlsym(lib, #name)); \
  if (la.name == nullptr)                                             \
    return unsupported(std::string("cannot load libarchive (") + ZREC_LIBARCHIVE_SONAME + "): it has no " #name);
  ZREC_LIBARCHIVE_FUNCTIONS(ZREC_LIBARCHIVE_RESOLVE)
#undef ZREC_LIBARCHIVE_RESOLVE
  return la;  // the library stays loaded until the process ends
}

}  // namespace

Result<const LibArchive*> libarchive() {
  static const Result<LibArchive> loaded = load();
  if (!loaded.is_ok()) return loaded.status();
  return &loaded.value();
}

}  // namespace zrec::cli
