// add_append_command and add_common_append_options (see append_command.h).
#include "cli/import/append_command.h"

#include <CLI/CLI.hpp>

namespace zrec::cli {

CLI::App* add_append_command(CLI::App& root, const AppendCommandForm& form, std::string& store) {
  CLI::App* cmd = root.add_subcommand(form.name, form.about);
  cmd->add_option("store", store, form.store)->required();
  return cmd;
}

void add_common_append_options(CLI::App* cmd, AppendArgs& args, const AppendCommandForm& form) {
  add_append_options(cmd, args);
  if (form.check_present) add_check_present_options(cmd, args);
}

}  // namespace zrec::cli
