// The per-record codecs of a store (docs/format.md §6), one per store, fixed at create.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zrec {

enum class Codec : uint8_t {
  kRaw = 0,       // the logical record, verbatim
  kZstd = 1,      // one zstd frame per record, level 3
  kZstdDict = 2,  // one zstd frame per record against dict.zr, level 15
};

// CLI/loaderx spelling: "raw", "zstd", "zstd_dict".
const char* to_string(Codec codec);

// Accepts "raw", "zstd", "zstd_dict" and the upstream alias "zstdict".
std::optional<Codec> parse_codec(std::string_view name);

}  // namespace zrec
