// How loud a command is on stderr: what the reports and the progress meter read of the
// global options (-q, -v, --progress, --no-progress). The app fills it (its
// GlobalOptions is one), so report/ needs nothing of the app.
#pragma once

namespace zrec::cli {

struct OutputPrefs {
  int verbosity = 0;         // -q: -1, -v: 1, -vv: 2
  bool progress = false;     // --progress: force the progress meter
  bool no_progress = false;  // --no-progress
};

}  // namespace zrec::cli
