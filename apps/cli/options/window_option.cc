#include "cli/options/window_option.h"

#include <CLI/CLI.hpp>

namespace zrec::cli {

CLI::Option* add_window_mib_option(CLI::App* cmd, uint64_t& mib, const std::string& what) {
  return cmd->add_option("--window-mib", mib, "Memory budget of one " + what + ", MiB")
      ->check(CLI::Range(uint64_t{1}, uint64_t{1} << 20))
      ->capture_default_str();
}

}  // namespace zrec::cli
