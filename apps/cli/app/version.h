// What `zrec -V` prints: zrec's version and the versions of the libraries linked in.
#pragma once

#include <string>

namespace zrec::cli {

// zrec's version and the versions of the libraries linked in, one per line: each as the
// library reports itself at run time where it can (a shared library may differ from the
// headers built against: zstd, libarchive, LMDB, OpenSSL, HDF5), fmt and spdlog as
// compiled in (deps/: their headers and the code zrec compiles are of one version).
// libarchive is loaded only by the commands that read or write tar (libarchive_api.h);
// -V loads it too, and says so when it cannot.
std::string version_text();

}  // namespace zrec::cli
