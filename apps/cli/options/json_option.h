// --json, defined once for the commands whose man page lists the object's keys in its
// section JSON OUTPUT (docs/json.md): one wording, and the page it points to named from
// the command itself, so a copied line cannot point at another command's page.
//
// Example:
//   add_json_flag(cmd, args->json, "holding the card");
//   // --help: "--json  Print one JSON object on stdout holding the card (keys: man zrec-card, JSON OUTPUT)"
//   add_json_flag(cmd, args->json, "instead of the summary line", "needs -o FILE");
//   // "... instead of the summary line (needs -o FILE; keys: man zrec-train-dict, JSON OUTPUT)"
#pragma once

#include <string>

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// Adds the flag "--json" to `cmd`, bound to `json`: "Print one JSON object on stdout
// WHAT (NOTE; keys: man zrec-NAME, JSON OUTPUT)", each of WHAT and NOTE left out when
// empty, NAME the command's.
CLI::Option* add_json_flag(CLI::App* cmd, bool& json, const std::string& what = "", const std::string& note = "");

}  // namespace zrec::cli
