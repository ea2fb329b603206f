// --stream-codec STREAM=CODEC of recompress and concat of roots: a codec per stream,
// checked as append-tar checks its own (one CODEC per STREAM, a name that can be a
// stream's, no zstd_dict: its dictionary would need training per stream).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "zrec/codec.h"

namespace zrec::cli {

struct StreamCodecs {
  std::map<std::string, Codec> codecs;       // by stream
  std::map<std::string, std::string> specs;  // the option as given, by stream, for messages
};

// Parses the options; a bad one is a UsageError naming it and the rule.
StreamCodecs parse_stream_codecs(const std::vector<std::string>& specs);

// A UsageError for an option naming no stream of `streams` (sorted), listing them.
void check_stream_codecs_name(const StreamCodecs& codecs, const std::vector<std::string>& streams);

}  // namespace zrec::cli
