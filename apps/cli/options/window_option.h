// --window-mib N, defined once for every command that reads or writes through a window
// of records (cat, digest, append-*, recompress, concat): same spelling, same range
// (1..1048576 MiB), same default shown, same errors everywhere.
//
// Example:
//   uint64_t window_mib = kDefaultWindowBytes >> 20;
//   add_window_mib_option(cmd, window_mib, "read window");
//   // --help: "--window-mib UINT:INT in [1 - 1048576] [64]  Memory budget of one read window, MiB"
//   // "zrec cat --window-mib 0 ..." -> usage error, exit 2
#pragma once

#include <cstdint>
#include <string>

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// Adds "--window-mib N" to `cmd`, bound to `mib`, described as "Memory budget of one
// WHAT, MiB", with `mib`'s value as the default shown.
CLI::Option* add_window_mib_option(CLI::App* cmd, uint64_t& mib, const std::string& what);

}  // namespace zrec::cli
