// Root of the CLI: global flags, the subcommand table, error and exit-code policy.
#include "cli/app/app.h"

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "zrec/context.h"
#include "zrec/remote.h"

#include "cli/app/did_you_mean.h"
#include "cli/app/dispatch.h"
#include "cli/app/help_format.h"
#include "cli/app/parse_errors.h"
#include "cli/app/root_options.h"
#include "cli/app/version.h"
#include "cli/options/thread_count.h"
#include "cli/os/interrupt.h"
#include "cli/os/pipe_deadlock.h"
#include "cli/report/console.h"

namespace zrec::cli {

int exit_code_for(const Status& s) {
  if (s.is_ok()) return kExitOk;
  if (s.code() == StatusCode::kCancelled) return interrupt_exit_code();  // 130 SIGINT, 143 SIGTERM
  if (s.code() == StatusCode::kBusy) return kExitBusy;
  return kExitFailure;
}

namespace {

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

// The command a command line names, when it names one exactly: the first word that is
// neither a root option nor the value of one (read as CLI11 reads them); nullptr when
// there is none (`zrec --help`), it is no command's name (a typo, which the messages
// of did_you_mean.h answer with every command's name) or it is `completion`, which
// writes out every command.
const CommandEntry* named_command(const CLI::App& root, int argc, char** argv, std::span<const CommandEntry> table) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--") return nullptr;
    if (word.size() > 1 && word[0] == '-') {
      if (word.find('=') != std::string_view::npos) continue;
      const CLI::Option* opt = root.get_option_no_throw(std::string(word));
      if (opt != nullptr && opt->get_items_expected_max() > 0) ++i;  // its value
      continue;
    }
    for (const CommandEntry& c : table)
      if (word == c.name) return word == "completion" ? nullptr : &c;
    return nullptr;
  }
  return nullptr;
}

}  // namespace

std::shared_ptr<Lanes> GlobalOptions::executor(Work work) const {
  auto& mine = lanes_[work == Work::kRead ? 0 : 1];
  if (mine) return mine;
  const size_t count = work == Work::kRead ? read_lane_budget(threads) : write_lane_budget(threads);
  const auto& other = lanes_[work == Work::kRead ? 1 : 0];
  mine = other && other->count() == count ? other : std::make_shared<Lanes>(count);
  return mine;
}

Context GlobalOptions::context(Work work) const { return context_on(executor(work)); }

Context GlobalOptions::read_context(const std::string& store) const {
  const size_t count = read_lane_count(store, threads);
  if (count == read_lane_budget(threads)) return context(Work::kRead);
  if (!remote_lanes_) remote_lanes_ = std::make_shared<Lanes>(count);
  return context_on(remote_lanes_);
}

Context GlobalOptions::transfer_context() const { return context_on(nullptr); }

Context GlobalOptions::context_on(std::shared_ptr<Lanes> lanes) const {
  Context ctx;
  ctx.lanes = std::move(lanes);
  ctx.wait = LockWait(wait);
  ctx.wait.probe = pipe_deadlock;  // a --wait on our own pipe's writer fails, not hangs
  ctx.wait.deadline = wait_deadline;
  ctx.wait.timeout_text = wait_timeout_text;
  // SIGINT/SIGTERM end a --wait on a held store, a remote transfer and a long operation.
  ctx.control.cancel = interrupt_token();
  ctx.warn = log_core_warning;
  ctx.remote = remote;
  return ctx;
}

namespace {

// The root command, its options and the commands: only the command the line names, when
// it names one.
// Performance note: building all 17 (CLI11 objects for some 300 options) was half of the
// instructions and a fifth of the page faults of a `zrec info` of an empty store
// (docs/bench.md, "Process start"). Help, completion and mistyped names see every command.
std::vector<Command> add_commands(CLI::App& app, const GlobalOptions& global, int argc, char** argv,
                                  std::span<const CommandEntry> table) {
  std::vector<Command> commands;
  if (const CommandEntry* named = named_command(app, argc, argv, table)) {
    commands.push_back(named->add(app, global));
  } else {
    for (const CommandEntry& c : table) commands.push_back(c.add(app, global));
  }
  return commands;
}

// What is answered before CLI11 parses: `zrec` alone (how to use it, on stderr: it did
// nothing, exit 2), `zrec help [CMD]` (the help of zrec or of one command, as --help
// prints it) and a mistyped name, reported with the nearest real one (CLI11 would report
// something else first: "A subcommand is required", "--dtype is required"). The exit
// code, or nothing when the line is for CLI11 to parse.
std::optional<int> answer_before_parse(const CLI::App& app, const std::vector<Command>& commands,
                                       const std::vector<std::string>& words) {
  if (words.empty()) {
    std::fprintf(stderr, "%s", app.help().c_str());
    return kExitUsage;
  }
  if (words[0] == "help") {
    if (words.size() == 1) {
      std::printf("%s", app.help().c_str());
      return kExitOk;
    }
    for (const Command& c : commands)
      if (words.size() == 2 && c.app->get_name() == words[1]) {
        std::printf("%s", c.app->help("zrec").c_str());
        return kExitOk;
      }
    if (words.size() > 2) {
      std::fprintf(stderr, "zrec help: unexpected operand '%s'\nTry 'zrec help' for the list of commands.\n",
                   diagnostic_text(words[2]).c_str());
      return kExitUsage;
    }
    auto bad = find_unknown_name(app, {words[1]});
    std::fprintf(stderr, "zrec help: %s\nTry 'zrec help' for the list of commands.\n",
                 diagnostic_text(bad ? bad->message : "'" + words[1] + "' is not a command").c_str());
    return kExitUsage;
  }
  if (auto bad = find_unknown_name(app, words)) {
    std::fprintf(stderr, "%s: %s\n", bad->where.c_str(), diagnostic_text(bad->message).c_str());
    if (bad->is_command) std::fprintf(stderr, "Try 'zrec --help' for the list of commands.\n");
    else std::fprintf(stderr, "Try '%s --help' for more information.\n", bad->where.c_str());
    return kExitUsage;
  }
  return std::nullopt;
}

// "zrec" or "zrec cat": what the parsed command line named, for messages.
std::string command_path(const std::vector<Command>& commands) {
  std::string where = "zrec";
  for (const Command& c : commands)
    if (c.app->parsed()) where += " " + c.app->get_name();
  return where;
}

// CLI11's parse. The exit code where the parse ends the process (help, version, a parse
// error, printed on stderr), or nothing when a command is to run.
std::optional<int> parse_command_line(CLI::App& app, int argc, char** argv, const std::vector<Command>& commands) {
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
    const std::string where = command_path(commands);
    const std::string message = parse_error_message(e);
    if (message == "no command given") {  // global options only: `zrec -v`
      std::fprintf(stderr, "zrec: no command given\n%s", app.help().c_str());
      return kExitUsage;
    }
    std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", where.c_str(),
                 diagnostic_text(message).c_str(), where.c_str());
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace

int run_cli(int argc, char** argv, std::span<const CommandEntry> table) {
  CLI::App app{"zrec: build, inspect, check and measure zrecord stores (the loaderx record format)"};
  app.name("zrec");
  use_help_format(app);  // before the subcommands, which inherit it
  app.set_version_flag(
      "-V,--version", std::function<std::string()>(version_text),  // called for -V only: it loads libarchive
      "Print the version of zrec and of the libraries it uses (zstd, fmt, libarchive, HDF5, LMDB, OpenSSL)");
  app.require_subcommand(1, 1);
  app.fallthrough();

  GlobalOptions global;
  RootOptions root;
  add_root_options(app, global, root);
  const std::vector<Command> commands = add_commands(app, global, argc, argv, table);
  refuse_negative_unsigned(app);

  const std::vector<std::string> words(argv + 1, argv + argc);
  if (std::optional<int> code = answer_before_parse(app, commands, words)) return *code;
  if (std::optional<int> code = parse_command_line(app, argc, argv, commands)) return *code;
  if (!finish_root_options(root, global, command_path(commands))) return kExitUsage;
  for (const Command& c : commands)
    if (c.app->parsed()) return run_command(c, global);
  return kExitUsage;  // unreachable: require_subcommand(1)
}

}  // namespace zrec::cli
