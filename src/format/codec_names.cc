// CLI/loaderx names of the codecs (docs/format.md §6 and §10 "Codec names").
#include <iterator>

#include "zrec/format.h"

namespace zrec {

namespace {

// Indexed by the codec's format byte; to_string and parse_codec both read it. The size
// check stands in for -Wswitch's "every value named": a codec added after kZstdDict
// moves the last value, and this must grow with it.
constexpr std::string_view kNames[] = {"raw", "zstd", "zstd_dict"};
static_assert(std::size(kNames) == static_cast<size_t>(Codec::kZstdDict) + 1,
              "one name per Codec, in the enum's order");

}  // namespace

const char* to_string(Codec codec) {
  const auto i = static_cast<size_t>(codec);
  return i < std::size(kNames) ? kNames[i].data() : "unknown";
}

std::optional<Codec> parse_codec(std::string_view name) {
  if (name == "zstdict") return Codec::kZstdDict;  // another name for it (docs/format.md §6)
  for (size_t i = 0; i < std::size(kNames); ++i)
    if (name == kNames[i]) return static_cast<Codec>(i);
  return std::nullopt;
}

}  // namespace zrec
