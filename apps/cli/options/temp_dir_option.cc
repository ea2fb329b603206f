// add_temp_dir_option (see temp_dir_option.h).
#include "cli/options/temp_dir_option.h"

#include <CLI/CLI.hpp>

namespace zrec::cli {

CLI::Option* add_temp_dir_option(CLI::App* cmd, std::string& dir, const std::string& what) {
  return cmd->add_option("--temp-dir", dir, what + " (default: $TMPDIR or /tmp)")->type_name("DIR");
}

}  // namespace zrec::cli
