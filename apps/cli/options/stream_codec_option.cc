#include "cli/options/stream_codec_option.h"

#include <algorithm>

#include "zrec/dataset.h"

#include "cli/formats/printable.h"
#include "cli/options/option_values.h"
#include "cli/options/usage_error.h"

namespace zrec::cli {

StreamCodecs parse_stream_codecs(const std::vector<std::string>& specs,
                                 const std::function<std::string(const std::string& stream)>& zstd_dict_advice) {
  StreamCodecs out;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--stream-codec '" + printable(spec) + "': expected STREAM=CODEC, e.g. --stream-codec png=raw");
    const std::string name = spec.substr(0, eq);
    if (const std::string why = stream_name_problem(name); !why.empty())
      throw UsageError("--stream-codec '" + printable(spec) + "': '" + printable(name) +
                       "' cannot name a stream: " + why);
    if (const auto first = out.specs.find(name); first != out.specs.end())
      throw UsageError("--stream-codec '" + printable(spec) + "': the stream '" + printable(name) +
                       "' has a codec already (--stream-codec '" + printable(first->second) +
                       "'); give one CODEC per STREAM");
    const NewCodec codec = parse_new_codec(spec.substr(eq + 1));
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
