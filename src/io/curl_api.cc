// libcurl() (see curl_api.h).
#include "io/curl_api.h"

#include <string>

#include "zrec_support/shared_library.h"

namespace zrec::io {

namespace {

Result<LibCurl> load() {
  // ZREC_CURL_SONAME: the soname of the libcurl zrec was built against (CMake reads it
  // from the library), so the loaded one has the ABI of the headers.
  ZREC_ASSIGN_OR_RETURN(const SharedLibrary lib,
                        SharedLibrary::open(ZREC_CURL_SONAME, "libcurl", "reading a store by URL needs"));
  LibCurl table;
  ZREC_CURL_FUNCTIONS(ZREC_SHARED_LIBRARY_RESOLVE)
  // Once, before any thread makes a handle (curl_global_init is not thread-safe; the
  // static in libcurl() runs this once).
  if (table.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return unsupported(std::string("cannot initialize libcurl (") + ZREC_CURL_SONAME + ")");
  return table;
}

}  // namespace

Result<const LibCurl*> libcurl() {
  static const Result<LibCurl> loaded = load();
  if (!loaded.is_ok()) return loaded.status();
  return &loaded.value();
}

}  // namespace zrec::io
