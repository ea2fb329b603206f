#include "cli/options/stream_codec_option.h"

#include <algorithm>

#include "zrec/dataset.h"

#include "cli/formats/printable.h"
#include "cli/options/option_values.h"
#include "cli/options/per_stream_value.h"
#include "cli/options/usage_error.h"

namespace zrec::cli {

StreamCodecs parse_stream_codecs(const std::vector<std::string>& specs,
                                 const std::function<std::string(const std::string& stream)>& zstd_dict_advice) {
  StreamCodecs out;
  for (const std::string& spec : specs) {
    const auto [name, value] = split_per_stream_value(
        spec, out.specs, {.option = "--stream-codec", .value = "CODEC", .example = "png=raw", .has = "a codec"});
    const NewCodec codec = parse_new_codec(value);
    if (!codec.automatic && codec.codec == Codec::kZstdDict)
      throw UsageError("--stream-codec '" + printable(spec) + "': " + zstd_dict_advice(name));
    out.codecs[name] = codec;
    out.specs[name] = spec;
  }
  return out;
}

void check_stream_codecs_name(const StreamCodecs& codecs, const std::vector<std::string>& streams) {
  for (const auto& [name, spec] : codecs.specs) {
    if (std::ranges::binary_search(streams, name)) continue;
    std::string list;
    for (const auto& s : streams) list += (list.empty() ? "" : ", ") + s;
    throw UsageError("--stream-codec '" + printable(spec) + "': '" + printable(name) + "' is not one of the streams (" +
                     list + ")");
  }
}

}  // namespace zrec::cli
