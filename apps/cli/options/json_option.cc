// add_json_flag (see json_option.h).
#include "cli/options/json_option.h"

#include <CLI/CLI.hpp>

namespace zrec::cli {

CLI::Option* add_json_flag(CLI::App* cmd, bool& json, const std::string& what, const std::string& note) {
  return cmd->add_flag("--json", json,
                       "Print one JSON object on stdout" + (what.empty() ? "" : " " + what) + " (" +
                           (note.empty() ? "" : note + "; ") + "keys: man zrec-" + cmd->get_name() + ", JSON OUTPUT)");
}

}  // namespace zrec::cli
