// libarchive() (see libarchive_api.h).
#include "cli/os/libarchive_api.h"

#include <string>

#include "zrec_support/shared_library.h"

namespace zrec::cli {

namespace {

Result<LibArchive> load() {
  // ZREC_LIBARCHIVE_SONAME: the soname of the libarchive zrec was built against (CMake
  // reads it from the library), so the loaded one has the ABI of the headers.
  ZREC_ASSIGN_OR_RETURN(const SharedLibrary lib,
                        SharedLibrary::open(ZREC_LIBARCHIVE_SONAME, "libarchive", "tar input and output need"));
  LibArchive table;
  ZREC_LIBARCHIVE_FUNCTIONS(ZREC_SHARED_LIBRARY_RESOLVE)
  return table;
}

}  // namespace

Result<const LibArchive*> libarchive() {
  static const Result<LibArchive> loaded = load();
  if (!loaded.is_ok()) return loaded.status();
  return &loaded.value();
}

}  // namespace zrec::cli
