// Options that give a stream one value each, STREAM=VALUE: --stream-codec png=raw (a
// stream's codec), --stream-dict txt=txt.dict (a stream's dictionary). One parser, so
// both refuse the same mistakes in the same words.
//
// Example:
//   const PerStreamForm form{.option = "--stream-codec", .value = "CODEC", .example = "png=raw", .has = "a codec"};
//   auto [name, codec] = split_per_stream_value(spec, specs_so_far, form);
//   // "png" -> UsageError "--stream-codec 'png': expected STREAM=CODEC, e.g. --stream-codec png=raw"
#pragma once

#include <map>
#include <string>
#include <utility>

namespace zrec::cli {

struct PerStreamForm {
  const char* option = "";   // "--stream-codec"
  const char* value = "";    // what VALUE is, as the usage writes it: "CODEC"
  const char* example = "";  // a whole STREAM=VALUE: "png=raw"
  const char* has = "";      // what a stream given one has: "a codec"
};

// STREAM and VALUE of `spec`, split at the first '='. A UsageError naming the option and
// `spec` when either side is empty, when STREAM cannot name a stream, or when `given`
// (the specs taken so far, by stream) holds one for STREAM already: a second VALUE for a
// stream is a mistake in a script, not an override.
std::pair<std::string, std::string> split_per_stream_value(const std::string& spec,
                                                           const std::map<std::string, std::string>& given,
                                                           const PerStreamForm& form);

}  // namespace zrec::cli
