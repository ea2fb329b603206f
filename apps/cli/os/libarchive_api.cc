// libarchive() (see libarchive_api.h).
#include "cli/os/libarchive_api.h"

#include "zrec_support/shared_library.h"

namespace zrec::cli {

Result<const LibArchive*> libarchive() {
  // ZREC_LIBARCHIVE_SONAME: the soname of the libarchive zrec was built against (CMake
  // reads it from the library), so the loaded one has the ABI of the headers.
  return SharedLibrary::load_once<LibArchive>(ZREC_LIBARCHIVE_SONAME, "libarchive", "tar input and output need");
}

}  // namespace zrec::cli
