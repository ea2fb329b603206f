// Commands that take several stores (`zrec verify stores/*/`, `zrec info a/ b/`) check
// each one on its own: a store that fails is reported on stderr and the next one is
// still checked, and the exit status is the worst of them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "zrec/status.h"

namespace zrec::cli {

// Runs `one` on each of `paths` in order. Every failure but the one returned is printed
// as app.cc prints a command's error ("zrec COMMAND: MESSAGE"); an interruption stops
// at once. Returns the failure whose exit_code is highest (the worst; on a tie the
// last), or ok when every path succeeded.
Status for_each_path(const std::string& command, const std::vector<std::string>& paths,
                     const std::function<Status(const std::string&)>& one,
                     const std::function<int(const Status&)>& exit_code);

}  // namespace zrec::cli
