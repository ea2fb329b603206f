// CLI/loaderx names of the codecs (docs/format.md §6 and §10 "Codec names").
#include "zrec/codec.h"

namespace zrec {

const char* to_string(Codec codec) {
  switch (codec) {
    case Codec::kRaw:
      return "raw";
    case Codec::kZstd:
      return "zstd";
    case Codec::kZstdDict:
      return "zstd_dict";
  }
  return "unknown";
}

std::optional<Codec> parse_codec(std::string_view name) {
  if (name == "raw") return Codec::kRaw;
  if (name == "zstd") return Codec::kZstd;
  if (name == "zstd_dict" || name == "zstdict") return Codec::kZstdDict;
  return std::nullopt;
}

}  // namespace zrec
