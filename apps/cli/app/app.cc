// Root of the CLI: global flags, the subcommand table, error and exit-code policy.
#include "cli/app/app.h"

#include <lmdb.h>
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>
#include <H5public.h>
#include <fmt/format.h>
#include <openssl/crypto.h>
#include <spdlog/spdlog.h>
#include <spdlog/version.h>

#include "zrec/lock_wait.h"
#include "zrec/remote.h"

#include "cli/app/did_you_mean.h"
#include "cli/app/help_format.h"
#include "cli/app/parse_errors.h"
#include "cli/app/usage.h"
#include "cli/options/thread_count.h"
#include "cli/os/interrupt.h"
#include "cli/os/libarchive_api.h"
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

// zrec's version and the versions of the libraries linked in, one per line: each as the
// library reports itself at run time where it can (a shared library may differ from the
// headers built against: zstd, libarchive, LMDB, OpenSSL, HDF5), fmt and spdlog as
// compiled in (deps/: their headers and the code zrec compiles are of one version).
// libarchive is loaded only by the commands that read or write tar (libarchive_api.h);
// -V loads it too, and says so when it cannot.
std::string version_text() {
  auto la = libarchive();
  const std::string archive_line =
      la.is_ok() ? std::string(la.value()->archive_version_string()) : "libarchive: " + la.status().message();
  unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
  (void)H5get_libversion(&h5_major, &h5_minor, &h5_release);
  int lmdb_major = 0, lmdb_minor = 0, lmdb_patch = 0;
  (void)mdb_version(&lmdb_major, &lmdb_minor, &lmdb_patch);
  return fmt::format("zrec {}\nzstd {}\nfmt {}.{}.{}\nspdlog {}.{}.{}\n{}\nhdf5 {}.{}.{}\nlmdb {}.{}.{}\nopenssl {}",
                     ZREC_VERSION, ZSTD_versionString(), FMT_VERSION / 10000, FMT_VERSION / 100 % 100,
                     FMT_VERSION % 100, SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH, archive_line, h5_major,
                     h5_minor, h5_release, lmdb_major, lmdb_minor, lmdb_patch, OpenSSL_version(OPENSSL_VERSION_STRING));
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

std::shared_ptr<Lanes> GlobalOptions::lanes(Work work) const {
  auto& mine = lanes_[work == Work::kRead ? 0 : 1];
  if (mine) return mine;
  const size_t count = work == Work::kRead ? read_lane_budget(threads) : write_lane_budget(threads);
  const auto& other = lanes_[work == Work::kRead ? 1 : 0];
  mine = other && other->count() == count ? other : std::make_shared<Lanes>(count);
  return mine;
}

std::shared_ptr<Lanes> GlobalOptions::read_lanes(const std::string& store) const {
  if (!is_url(store) || threads != 0) return lanes(Work::kRead);
  if (!remote_lanes_) remote_lanes_ = std::make_shared<Lanes>(kRemoteLanes);
  return remote_lanes_;
}

io::LockWait GlobalOptions::lock_wait() const {
  io::LockWait w(wait);
  w.control.cancel = interrupt_token();               // --wait on a held store ends on SIGINT/SIGTERM too
  w.probe = wait_probe ? wait_probe : pipe_deadlock;  // a --wait on our own pipe's writer fails, not hangs
  return w;
}

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
  std::string wait_text;  // --wait: "forever"; --wait=SECONDS: the number
  std::optional<double> wait_seconds;
  app.add_flag("--wait{forever}", wait_text,
               "Wait for a store held by another process instead of failing (exit 75); --wait=SECONDS gives up "
               "after SECONDS");
  app.add_flag("--progress", global.progress, "Show progress on stderr even when it is not a terminal");
  app.add_flag("--no-progress", global.no_progress, "Never show progress");
  std::string cacert;
  app.add_option("--cacert", cacert,
                 "Verify HTTPS servers of remote stores (URLs) by the CA certificates in FILE (PEM) instead of the "
                 "system's")
      ->type_name("FILE");
  int remote_timeout = global.remote.stall_timeout_s;
  app.add_option("--remote-timeout", remote_timeout,
                 "Retry a request to a remote store (URL) that receives nothing for SECONDS; each request also ends "
                 "after twice that plus its bytes at 64 KiB/s (default: 30)")
      ->check(CLI::Range(1, 3600))
      ->type_name("SECONDS");
  app.add_option("--endpoint-url", global.remote.s3.endpoint_url,
                 "Read s3:// URLs from the S3-compatible server at URL, path-style (default: AWS_ENDPOINT_URL_S3, "
                 "AWS_ENDPOINT_URL, the profile's endpoint_url, else AWS)");
  app.add_flag("--no-sign-request", global.remote.s3.no_sign,
               "Read s3:// URLs anonymously, unsigned (a public bucket; also AWS_NO_SIGN_REQUEST=true)");

  // Performance note: only the command the line names is built, when it names one:
  // building all 17 (CLI11 objects for some 300 options) was half of the instructions
  // and a fifth of the page faults of a `zrec info` of an empty store (docs/bench.md,
  // "Process start"). Help, completion and mistyped names see every command.
  std::vector<Command> commands;
  if (const CommandEntry* named = named_command(app, argc, argv, table)) {
    commands.push_back(named->add(app, global));
  } else {
    for (const CommandEntry& c : table) commands.push_back(c.add(app, global));
  }

  refuse_negative_unsigned(app);

  // `zrec` alone: how to use it, on stderr (it did nothing: exit 2). `zrec help [CMD]`:
  // the help of zrec or of one command, as --help prints it.
  const std::vector<std::string> words(argv + 1, argv + argc);
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
  // A mistyped name is reported (with the nearest real one) before CLI11 parses: CLI11
  // would report something else first ("A subcommand is required", "--dtype is required").
  if (auto bad = find_unknown_name(app, words)) {
    std::fprintf(stderr, "%s: %s\n", bad->where.c_str(), diagnostic_text(bad->message).c_str());
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
    const std::string message = parse_error_message(e);
    if (message == "no command given") {  // global options only: `zrec -v`
      std::fprintf(stderr, "zrec: no command given\n%s", app.help().c_str());
      return kExitUsage;
    }
    std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", where.c_str(),
                 diagnostic_text(message).c_str(), where.c_str());
    return kExitUsage;
  }
  global.verbosity = quiet ? -1 : verbose;
  if (!wait_text.empty()) {
    global.wait = true;
    if (wait_text != "forever") {
      char* end = nullptr;
      const double seconds = std::strtod(wait_text.c_str(), &end);
      if (end == wait_text.c_str() || *end != '\0' || !(seconds >= 0) || seconds > 1e9) {
        std::fprintf(stderr,
                     "%s: --wait=%s: expected a number of seconds (e.g. --wait=30), or --wait alone\n"
                     "Try '%s --help' for more information.\n",
                     command_path().c_str(), diagnostic_text(wait_text).c_str(), command_path().c_str());
        return kExitUsage;
      }
      wait_seconds = seconds;
    }
  }
  const auto started = std::chrono::steady_clock::now();
  // A --wait ends when it can never succeed (our own pipe's writer holds the store), or
  // when --wait=SECONDS have passed since the command started.
  global.wait_probe = [wait_seconds, started, wait_text](const io::File& meta, const std::string& store) {
    std::string why = pipe_deadlock(meta, store);
    if (!why.empty() || !wait_seconds) return why;
    const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - started;
    if (waited.count() >= *wait_seconds)
      why = "store '" + store + "' is still locked by another process after " + wait_text + " s (--wait=" + wait_text +
            ")";
    return why;
  };
  Result<size_t> env_threads = threads_from_environment();
  if (!env_threads.is_ok()) {
    const std::string where = command_path();
    std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", where.c_str(),
                 diagnostic_text(env_threads.status().message()).c_str(), where.c_str());
    return kExitUsage;
  }
  if (threads_option->count() == 0) global.threads = *env_threads;
  // Remote stores (zrec/remote.h): a signal stops a transfer as it stops a lock wait.
  global.remote.cacert = cacert;
  global.remote.stall_timeout_s = remote_timeout;
  global.remote.cancel = interrupt_token().flag;

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
    if (const RemoteStats r = remote_stats(); r.requests > 0)
      spdlog::info("remote reads: {} requests, {} bytes received, {} retries", r.requests, r.bytes, r.retries);
    if (!s.is_ok()) {
      // A held lock is often a writer still at work: say how to wait for it.
      const char* hint = s.code() == StatusCode::kBusy && !global.wait ? "; pass --wait to wait for it" : "";
      std::fprintf(stderr, "zrec %s: %s%s\n", name, diagnostic_text(s.message()).c_str(), hint);
    }
    return c.exit_code ? c.exit_code(s) : exit_code_for(s);
  }
  return kExitUsage;  // unreachable: require_subcommand(1)
}

}  // namespace zrec::cli
