// One --level option for every encoding command (see level_option.h).
#include "cli/options/level_option.h"

#include <zstd.h>

#include <charconv>

#include <CLI/CLI.hpp>

namespace zrec::cli {

int max_zstd_level() { return ZSTD_maxCLevel(); }

CLI::Option* add_level_option(CLI::App* cmd, int& level, const std::string& what, const std::string& default_text) {
  const int max = max_zstd_level();
  const CLI::Validator zstd_level(
      [max](std::string& value) -> std::string {
        int n = 0;
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
        if (ec != std::errc() || end != value.data() + value.size() || n < 1 || n > max)
          return value + " is not a zstd level (1 to " + std::to_string(max) + ")";
        return {};
      },
      "");
  return cmd->add_option("--level", level, what + ", 1 to " + std::to_string(max) + " (default: " + default_text + ")")
      ->check(zstd_level)
      ->type_name("N");
}

}  // namespace zrec::cli
