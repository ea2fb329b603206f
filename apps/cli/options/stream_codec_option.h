// --stream-codec STREAM=CODEC of append-tar and of recompress and concat of roots: a
// codec per stream (one CODEC per STREAM, a name that can be a stream's, no zstd_dict:
// a dictionary comes with its own option or stays the stream's). CODEC may be auto: the
// stream's records choose (zrec/codec_choice.h), as --codec auto chooses a store's.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "zrec/format.h"

#include "cli/options/codec_rules.h"

namespace zrec::cli {

struct StreamCodecs {
  std::map<std::string, NewCodec> codecs;    // by stream
  std::map<std::string, std::string> specs;  // the option as given, by stream, for messages
};

// Parses the options; a bad one is a UsageError naming it and the rule. A zstd_dict
// CODEC is refused with zstd_dict_advice(STREAM), what the command offers instead.
StreamCodecs parse_stream_codecs(const std::vector<std::string>& specs,
                                 const std::function<std::string(const std::string& stream)>& zstd_dict_advice);

// A UsageError for an option naming no stream of `streams` (sorted), listing them.
void check_stream_codecs_name(const StreamCodecs& codecs, const std::vector<std::string>& streams);

}  // namespace zrec::cli
