// --level N, defined once for every command that encodes (create's codecs aside):
// append-npy, append-files, append-stream, append-tar, append-lmdb, recompress, concat,
// and train-dict (the level a dictionary is tuned for). Same spelling, same range, same
// errors everywhere.
//
// Example:
//   int level = 0;  // 0: not given, the format's level (3, or 15 with a dictionary)
//   add_level_option(cmd, level, "zstd level of the records appended", "the format's: 3, or 15 with a dictionary");
//   // "zrec append-npy --level 23 ..." -> usage error, exit 2:
//   //   "--level: 23 is not a zstd level (1 to 22)"
#pragma once

#include <string>

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// The levels zstd's own CLI accepts without --fast: 1 to ZSTD_maxCLevel() (22; levels
// above 19 are zstd's --ultra ones, which need more memory to decode).
int max_zstd_level();

// Adds "--level N" to `cmd`, bound to `level`, described as "WHAT, 1 to 22 (default:
// DEFAULT_TEXT)". A value outside 1..max_zstd_level(), or not an integer, is a
// usage error naming --level and the value. `level` keeps 0 when the option is absent.
CLI::Option* add_level_option(CLI::App* cmd, int& level, const std::string& what, const std::string& default_text);

}  // namespace zrec::cli
