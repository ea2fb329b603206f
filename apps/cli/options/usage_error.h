// Usage errors: the command line itself is wrong (exit code 2, and a "Try 'zrec CMD
// --help'" line). A library has no command line, so the core's Status has no code for
// this; the CLI reports the checks CLI11 cannot express (flag combinations, values parsed
// after the store is open) the way CLI11 reports its own parse errors: by throwing, and
// run_command (app/dispatch.cc) turns the exception into the message and exit code.
//
//   if (a.sample && a.shuffle) throw UsageError("give --sample or --shuffle");
//
// Thrown only on the command's own thread, never inside a core callback or a worker lane,
// so it unwinds through CLI frames and RAII objects alone (an unpublished append is
// dropped exactly as on an error return).
#pragma once

#include <stdexcept>
#include <string>

namespace zrec::cli {

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace zrec::cli
