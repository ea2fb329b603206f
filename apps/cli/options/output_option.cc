#include "cli/options/output_option.h"

#include <CLI/CLI.hpp>

namespace zrec::cli {

CLI::Option* add_output_options(CLI::App* cmd, std::string& output, bool& force, const std::string& what,
                                const std::string& force_also) {
  CLI::Option* o = cmd->add_option("-o,--output", output, what + " (- for stdout); an existing file needs -f")
                       ->capture_default_str();
  cmd->add_flag("-f,--force", force,
                "Overwrite an existing -o file" + (force_also.empty() ? std::string() : ", and " + force_also));
  return o;
}

}  // namespace zrec::cli
