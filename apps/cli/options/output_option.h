// -o,--output FILE and -f,--force, defined once for the commands that write one file
// (cat, digest, train-dict): the same spelling, the same rule (an existing file needs
// -f; - is stdout) and the same words in --help.
//
// Example:
//   std::string output = "-";
//   bool force = false;
//   add_output_options(cmd, output, force, "Output file", "write binary formats even to a terminal");
//   // --help: "-o,--output FILE  Output file (- for stdout); an existing file needs -f (default: -)"
//   //         "-f,--force        Overwrite an existing -o file, and write binary formats even to a terminal"
#pragma once

#include <string>

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// Adds "-o,--output FILE", bound to `output` and described as "WHAT (- for stdout); an
// existing file needs -f" with `output`'s value as the default shown (none when empty),
// then "-f,--force", bound to `force`: "Overwrite an existing -o file", followed by ",
// and FORCE_ALSO" when `force_also` is not empty. Returns --output (a command where it
// is required says so on it).
CLI::Option* add_output_options(CLI::App* cmd, std::string& output, bool& force, const std::string& what,
                                const std::string& force_also);

}  // namespace zrec::cli
