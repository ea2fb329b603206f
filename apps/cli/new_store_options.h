// The options of the append commands that may create their stores (append-tar's new
// streams, append-h5 --create): --codec, --dict, --shards and --level, parsed into
// the CreateOptions and the zstd level the new stores get, with the same checks and
// messages as `zrec create`.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

#include "zrec/store_writer.h"

namespace zrec::cli {

struct NewStoreArgs {
  std::string codec = "zstd";  // --codec: raw, zstd or zstd_dict
  std::string dict;            // --dict FILE: the dictionary of zstd_dict
  uint32_t shards = 4;         // --shards: 1..255
  int level = 0;               // --level: 1..22; 0: the format's (3, or 15 with a dictionary)
};

// Binds --codec, --dict, --shards and --level on `cmd`; `which` starts the help of the
// first three ("New streams", "With --create").
void add_new_store_options(CLI::App* cmd, NewStoreArgs& args, const std::string& which);

// The CreateOptions of a new store (without its schema): usage errors for --checksum
// with raw, zstd_dict without --dict and --dict without zstd_dict; I/O errors reading the
// dictionary file. `checksum` is the append's --checksum.
Result<CreateOptions> new_store_options(const NewStoreArgs& args, bool checksum);

}  // namespace zrec::cli
