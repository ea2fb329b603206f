// file_sha256 (zrec/digest.h): a file's bytes through SHA-256, a window at a time.
#include <fcntl.h>

#include <algorithm>
#include <vector>

#include "zrec/digest.h"
#include "zrec/remote.h"

#include "format/sha256.h"
#include "io/location.h"
#include "store/store_files.h"
#include "zrec_support/file.h"

namespace zrec {

Result<FileHash> file_sha256(const std::string& path, const Context& ctx) {
  constexpr uint64_t kWindow = uint64_t{4} << 20;
  ZREC_ASSIGN_OR_RETURN(const auto f, io::Location(path).open_for_reading(kWindow, ctx));
  ZREC_ASSIGN_OR_RETURN(const uint64_t size, f->size());
  format::Sha256 sha;
  std::vector<uint8_t> window(std::min(size, kWindow));
  for (uint64_t at = 0; at < size; at += window.size()) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(window.size(), size - at));
    ZREC_RETURN_IF_ERROR(f->pread_exact(window.data(), n, at));
    sha.update(window.data(), n);
  }
  return FileHash{sha.finish(), size};
}

}  // namespace zrec
