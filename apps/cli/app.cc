// Root of the CLI: global flags, the subcommand table, error and exit-code policy.
#include "cli/app.h"

#include <zstd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "zrec/lock_wait.h"

#include "cli/commands.h"
#include "cli/did_you_mean.h"
#include "cli/formats/printable.h"
#include "cli/help_format.h"
#include "cli/interrupt.h"
#include "cli/pipe_deadlock.h"
#include "cli/report/console.h"
#include "cli/thread_count.h"
#include "cli/usage.h"

namespace zrec::cli {

namespace {

int exit_code_for(const Status& s) {
  if (s.is_ok()) return kExitOk;
  if (s.code() == StatusCode::kCancelled) return interrupt_exit_code();  // 130 SIGINT, 143 SIGTERM
  return kExitFailure;
}

// CLI11 converts "-1" for an unsigned option by wrapping it to 2^64-1 (--skip-first -1
// would silently skip all input). Every option whose type is unsigned ("UINT") gets a
// check that refuses a sign, on the root and in every subcommand, so a new option
// cannot forget it.
void refuse_negative_unsigned(CLI::App& app) {
  const CLI::Validator non_negative(
      [](std::string& value) -> std::string {
        const size_t first = value.find_first_not_of(" \t");
        if (first != std::string::npos && value[first] == '-') return "'" + value + "' is not a non-negative integer";
        return {};
      },
      "");
  for (CLI::Option* opt : app.get_options())
    if (opt->get_type_name().rfind("UINT", 0) == 0) opt->check(non_negative);
  for (CLI::App* sub : app.get_subcommands({})) refuse_negative_unsigned(*sub);
}

// zrec's version and the versions of the libraries linked in: zstd as loaded at run time
// (a shared library may differ from the headers built against), fmt as compiled in.
std::string version_text() {
  return fmt::format("zrec {}\nzstd {}\nfmt {}.{}.{}", ZREC_VERSION, ZSTD_versionString(), FMT_VERSION / 10000,
                     FMT_VERSION / 100 % 100, FMT_VERSION % 100);
}

}  // namespace

std::shared_ptr<Lanes> GlobalOptions::lanes(Work work) const {
  auto& mine = lanes_[work == Work::kRead ? 0 : 1];
  if (mine) return mine;
  const size_t count = work == Work::kRead ? read_lane_budget(threads) : write_lane_budget(threads);
  const auto& other = lanes_[work == Work::kRead ? 1 : 0];
  mine = other && other->count() == count ? other : std::make_shared<Lanes>(count);
  return mine;
}

io::LockWait GlobalOptions::lock_wait() const {
  io::LockWait w(wait);
  w.cancel = interrupt_token();  // --wait on a held store ends on SIGINT/SIGTERM too
  w.probe = pipe_deadlock;       // a --wait on our own pipe's writer fails, not hangs
  return w;
}

int run_cli(int argc, char** argv) {
  CLI::App app{"zrec: build, inspect, check and measure zrecord stores (the loaderx record format)"};
  app.name("zrec");
  use_help_format(app);  // before the subcommands, which inherit it
  app.set_version_flag("-V,--version", version_text(),
                       "Print the version of zrec and of the zstd and fmt libraries it uses");
  app.require_subcommand(1, 1);
  app.fallthrough();
  app.footer(
      "Run 'zrec <command> --help' for one command, or see man zrec.\n"
      "Exit codes: 0 success, 1 failure (I/O, malformed store, bad input), 2 usage error.");

  GlobalOptions global;
  int verbose = 0;
  bool quiet = false;
  // ZREC_THREADS is read after parsing (threads_from_environment), not by CLI11, so that
  // its errors name the variable rather than --threads.
  CLI::Option* threads_option =
      app.add_option("--threads", global.threads,
                     "Worker lanes, 1..1024; overrides ZREC_THREADS (default: from the CPUs available; reads "
                     "max(cores, 3/4 CPUs), writes 3/4 CPUs)")
          ->check(thread_count_check());
  app.add_flag("-q,--quiet", quiet, "Errors only on stderr");
  app.add_flag("-v,--verbose", verbose, "More detail on stderr (repeat for debug)");
  app.add_flag("--wait", global.wait, "Wait for a store held by another process instead of failing");
  app.add_flag("--progress", global.progress, "Show progress on stderr even when it is not a terminal");
  app.add_flag("--no-progress", global.no_progress, "Never show progress");

  std::vector<Command> commands = {
      register_create(app, global),        register_append_npy(app, global), register_append_files(app, global),
      register_append_stream(app, global), register_append_tar(app, global), register_append_lmdb(app, global),
      register_append_h5(app, global),     register_cat(app, global),        register_info(app, global),
      register_train_dict(app, global),    register_recompress(app, global), register_concat(app, global),
      register_digest(app, global),        register_verify(app, global),     register_bench(app, global),
      register_view(app, global),          register_completion(app, global),
  };

  refuse_negative_unsigned(app);

  // A mistyped name is reported (with the nearest real one) before CLI11 parses: CLI11
  // would report something else first ("A subcommand is required", "--dtype is required").
  if (auto bad = find_unknown_name(app, std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr, "%s: %s\n", bad->where.c_str(), printable(bad->message).c_str());
    if (bad->is_command) std::fprintf(stderr, "Try 'zrec --help' for the list of commands.\n");
    else std::fprintf(stderr, "Try '%s --help' for more information.\n", bad->where.c_str());
    return kExitUsage;
  }
  // "zrec" or "zrec cat": what the parsed command line named, for messages.
  auto command_path = [&commands] {
    std::string where = "zrec";
    for (const Command& c : commands)
      if (c.app->parsed()) where += " " + c.app->get_name();
    return where;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const CLI::CallForVersion& e) {
    app.exit(e);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    const std::string where = command_path();
    std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", where.c_str(), printable(e.what()).c_str(),
                 where.c_str());
    return kExitUsage;
  }
  global.verbosity = quiet ? -1 : verbose;
  Result<size_t> env_threads = threads_from_environment();
  if (!env_threads.is_ok()) {
    const std::string where = command_path();
    std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", where.c_str(),
                 printable(env_threads.status().message()).c_str(), where.c_str());
    return kExitUsage;
  }
  if (threads_option->count() == 0) global.threads = *env_threads;

  for (const Command& c : commands) {
    if (!c.app->parsed()) continue;
    setup_logging(c.app->get_name(), global.verbosity);
    const char* name = c.app->get_name().c_str();
    Status s;
    // Data or --json's object for stdout: a closed one fails the command before its work.
    if (c.writes_stdout && c.writes_stdout()) s = check_stdout_open("the output");
    const CLI::Option* json = c.app->get_option_no_throw("--json");
    if (s.is_ok() && json != nullptr && json->count() > 0) s = check_stdout_open("the --json object");
    if (!s.is_ok()) {
      std::fprintf(stderr, "zrec %s: %s\n", name, printable(s.message()).c_str());
      return kExitFailure;
    }
    try {
      s = c.run();
    } catch (const UsageError& e) {
      std::fprintf(stderr, "zrec %s: %s\nTry 'zrec %s --help' for more information.\n", name,
                   printable(e.what()).c_str(), name);
      return kExitUsage;
    }
    if (!s.is_ok()) {
      // A held lock is often a writer still at work: say how to wait for it.
      const char* hint = s.code() == StatusCode::kBusy && !global.wait ? "; pass --wait to wait for it" : "";
      std::fprintf(stderr, "zrec %s: %s%s\n", name, printable(s.message()).c_str(), hint);
    }
    return c.exit_code ? c.exit_code(s) : exit_code_for(s);
  }
  return kExitUsage;  // unreachable: require_subcommand(1)
}

}  // namespace zrec::cli
