// `zrec recompress ROOT DST` and `zrec concat ROOT... DST`: a new root of the same
// streams, each recompressed (--codec, --stream-codec) or joined, holding the sources'
// committed samples one root after another (zrec::build_root: streams first, the marker
// last, the directory renamed into place whole).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zrec/status.h"

#include "cli/app/command.h"
#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// What recompress and concat of roots take (TransferArgs' fields that apply to them).
struct RootTransferArgs {
  std::string dst;
  std::vector<std::string> sources;
  std::string codec;  // "": each stream's own
  uint32_t shards = 0;
  int level = 0;
  uint64_t window_mib = 64;
  bool checksum = false;
  bool json = false;
  std::vector<std::string> stream_codecs;  // --stream-codec STREAM=CODEC
  bool store_only = false;                 // --dict, --tier or --consume: for one store (a usage error)
  std::string exclude_from;                // recompress --exclude-from FILE: sample IDs left out
};

// --stream-codec STREAM=CODEC (repeatable), for a root's streams.
void add_stream_codec_option(CLI::App* cmd, std::vector<std::string>& specs);

// True when any of `sources` is a root: the command is then run_root_transfer's.
bool any_root(const std::vector<std::string>& sources, const GlobalOptions& g);

// Builds args.dst from the roots args.sources (every one a root, of the same streams
// with the same schemas: refused naming the difference). Prints one summary line on
// stderr, or the JSON object with --json (per stream: name, codec, length, stored_bytes).
Status run_root_transfer(const std::string& command, const RootTransferArgs& args, const GlobalOptions& g);

}  // namespace zrec::cli
