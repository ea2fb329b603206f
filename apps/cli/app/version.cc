// `zrec -V`: the version text, the one file of the app that asks each library its version.
#include "cli/app/version.h"

#include <lmdb.h>
#include <zstd.h>

#include <string>

#include <H5public.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <spdlog/version.h>

#include "cli/os/libarchive_api.h"

namespace zrec::cli {

std::string version_text() {
  auto la = libarchive();
  const std::string archive_line =
      la.is_ok() ? std::string(la.value()->archive_version_string()) : "libarchive: " + la.status().message();
  unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
  (void)H5get_libversion(&h5_major, &h5_minor, &h5_release);
  int lmdb_major = 0, lmdb_minor = 0, lmdb_patch = 0;
  (void)mdb_version(&lmdb_major, &lmdb_minor, &lmdb_patch);
  return fmt::format("zrec {}\nzstd {}\nfmt {}.{}.{}\nspdlog {}.{}.{}\n{}\nhdf5 {}.{}.{}\nlmdb {}.{}.{}\nopenssl {}",
                     ZREC_VERSION, ZSTD_versionString(), FMT_VERSION / 10000, FMT_VERSION / 100 % 100,
                     FMT_VERSION % 100, SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH, archive_line, h5_major,
                     h5_minor, h5_release, lmdb_major, lmdb_minor, lmdb_patch, OpenSSL_version(OPENSSL_VERSION_STRING));
}

}  // namespace zrec::cli
