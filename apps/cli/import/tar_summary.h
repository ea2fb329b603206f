// What a successful append-tar says at its end: its warnings, the keys of its --json
// object and its one summary line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cli/report/command_report.h"

namespace zrec::cli {

// A finished run's counts.
struct TarRunCounts {
  uint64_t added = 0;         // samples appended
  uint64_t skipped = 0;       // complete samples skipped: --skip-first, then those already present
  uint64_t skip_first = 0;    // --skip-first
  uint64_t incomplete = 0;    // samples skipped as incomplete (--skip-incomplete)
  uint64_t ignored = 0;       // members ignored
  uint64_t bytes_in = 0;      // bytes read of the members
  uint64_t stored = 0;        // bytes the streams grew by
  uint64_t first_length = 0;  // samples the root held when the run began
};

// Warns of ignored members and incomplete samples, sets the report's keys and returns
// its summary line: "appended N samples (... in, ... stored) to K streams of 'ROOT'
// (a, b) ... in S s (...); it now holds M".
std::string tar_import_summary(CommandReport& outcome, const std::string& root, const std::vector<std::string>& streams,
                               const std::string& stream_list, const TarRunCounts& c);

}  // namespace zrec::cli
