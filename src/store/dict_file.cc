// save_dictionary_file (zrec/dict.h): a dictionary file written whole or not at all.
#include "zrec/dict.h"

#include "store/temp_files.h"

namespace zrec {

Status save_dictionary_file(const std::string& path, std::span<const uint8_t> dictionary, const Context& ctx) {
  return store::write_file_whole(
      path, std::string_view(reinterpret_cast<const char*>(dictionary.data()), dictionary.size()),
      std::string_view(reinterpret_cast<const char*>(store::kDictMagic), sizeof store::kDictMagic), "zstd dictionary",
      /*replace=*/true, ctx.warn);
}

}  // namespace zrec
