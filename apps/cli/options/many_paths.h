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

// for_each_path for a command whose options struct names its store in `.path`: runs
// `run` on a copy of `args` for each of `paths`, that copy's `.path` set to the path.
template <class Args, class Run>
Status for_each_path_of(const std::string& command, const Args& args, const std::vector<std::string>& paths,
                        const Run& run, const std::function<int(const Status&)>& exit_code) {
  return for_each_path(
      command, paths,
      [&](const std::string& path) {
        Args one = args;
        one.path = path;
        return run(one);
      },
      exit_code);
}

}  // namespace zrec::cli
