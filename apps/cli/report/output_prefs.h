// How loud a command is on stderr: what the reports and the progress meter read of the
// global options (-q, -v, --progress, --no-progress), and what the command's remote
// reads cost (--json's "remote"). The app fills it (its GlobalOptions is one), so
// report/ needs nothing of the app.
#pragma once

#include <memory>

#include "zrec/remote.h"

namespace zrec::cli {

struct OutputPrefs {
  int verbosity = 0;         // -q: -1, -v: 1, -vv: 2
  bool progress = false;     // --progress: force the progress meter
  bool no_progress = false;  // --no-progress
  // Where the command's reads of remote stores count their cost (the app hands the same
  // counters to every read, GlobalOptions::remote.stats); null: none counted.
  std::shared_ptr<const RemoteCounters> remote_reads = nullptr;
};

}  // namespace zrec::cli
