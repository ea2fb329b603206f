// The parsed command's run, and the exit-code policy around it.
#include "cli/app/dispatch.h"

#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/remote.h"

#include "cli/app/app.h"
#include "cli/options/usage_error.h"
#include "cli/report/console.h"

namespace zrec::cli {

int run_command(const Command& c, const GlobalOptions& global) {
  setup_logging(c.app->get_name(), global.verbosity);
  const char* name = c.app->get_name().c_str();
  Status s;
  // Data or --json's object for stdout: a closed one fails the command before its work.
  if (c.writes_stdout && c.writes_stdout()) s = check_stdout_open("the output");
  const CLI::Option* json = c.app->get_option_no_throw("--json");
  if (s.is_ok() && json != nullptr && json->count() > 0) s = check_stdout_open("the --json object");
  if (!s.is_ok()) {
    std::fprintf(stderr, "zrec %s: %s\n", name, diagnostic_text(s.message()).c_str());
    return kExitFailure;
  }
  try {
    s = c.run();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "zrec %s: %s\nTry 'zrec %s --help' for more information.\n", name,
                 diagnostic_text(e.what()).c_str(), name);
    return kExitUsage;
  }
  if (const RemoteStats r = global.remote_reads ? global.remote_reads->load() : RemoteStats{}; r.requests > 0)
    spdlog::info("remote reads: {} requests, {} bytes received, {} retries", r.requests, r.bytes, r.retries);
  if (!s.is_ok()) {
    // A held lock is often a writer still at work: say how to wait for it.
    const char* hint = s.code() == StatusCode::kBusy && !global.wait ? "; pass --wait to wait for it" : "";
    std::fprintf(stderr, "zrec %s: %s%s\n", name, diagnostic_text(s.message()).c_str(), hint);
  }
  return c.exit_code ? c.exit_code(s) : exit_code_for(s);
}

}  // namespace zrec::cli
