// The root's options: their CLI11 bindings, and what they become after the parse.
#include "cli/app/root_options.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "zrec/context.h"
#include "zrec/remote.h"

#include "cli/options/thread_count.h"
#include "cli/os/interrupt.h"
#include "cli/report/console.h"

namespace zrec::cli {

void add_root_options(CLI::App& app, GlobalOptions& global, RootOptions& root) {
  // ZREC_THREADS is read after parsing (threads_from_environment), not by CLI11, so that
  // its errors name the variable rather than --threads.
  root.threads_option =
      app.add_option("--threads", global.threads,
                     "Worker lanes, 1..1024; overrides ZREC_THREADS (default: from the CPUs available; reads "
                     "max(cores, 3/4 CPUs), writes 3/4 CPUs; a URL, 32)")
          ->check(thread_count_check());
  app.add_flag("-q,--quiet", root.quiet, "Errors only on stderr");
  app.add_flag("-v,--verbose", root.verbose, "More detail on stderr (repeat for debug)");
  app.add_flag("--wait{forever}", root.wait_text,
               "Wait for a store held by another process instead of failing (exit 75); --wait=SECONDS gives up "
               "after SECONDS");
  app.add_flag("--progress", global.progress, "Show progress on stderr even when it is not a terminal");
  app.add_flag("--no-progress", global.no_progress, "Never show progress");
  app.add_option("--cacert", root.cacert,
                 "Verify HTTPS servers of remote stores (URLs) by the CA certificates in FILE (PEM) instead of the "
                 "system's")
      ->type_name("FILE");
  root.remote_timeout = global.remote.stall_timeout_s;
  app.add_option("--remote-timeout", root.remote_timeout,
                 "Retry a request to a remote store (URL) that receives nothing for SECONDS; each request also ends "
                 "after twice that plus its bytes at 64 KiB/s (default: 30)")
      ->check(CLI::Range(1, 3600))
      ->type_name("SECONDS");
  app.add_option("--endpoint-url", global.remote.s3.endpoint_url,
                 "Read s3:// URLs from the S3-compatible server at URL, path-style (default: AWS_ENDPOINT_URL_S3, "
                 "AWS_ENDPOINT_URL, the profile's endpoint_url, else AWS)");
  app.add_flag("--no-sign-request", global.remote.s3.no_sign,
               "Read s3:// URLs anonymously, unsigned (a public bucket; also AWS_NO_SIGN_REQUEST=true)");
}

namespace {

// --wait's seconds: none for --wait alone ("forever"); false when the text is no number
// of seconds (a usage error, printed here for `where`).
bool parse_wait_seconds(const std::string& wait_text, const std::string& where, std::optional<double>& seconds_out) {
  if (wait_text == "forever") return true;
  char* end = nullptr;
  const double seconds = std::strtod(wait_text.c_str(), &end);
  if (end == wait_text.c_str() || *end != '\0' || !(seconds >= 0) || seconds > 1e9) {
    std::fprintf(stderr,
                 "%s: --wait=%s: expected a number of seconds (e.g. --wait=30), or --wait alone\n"
                 "Try '%s --help' for more information.\n",
                 where.c_str(), diagnostic_text(wait_text).c_str(), where.c_str());
    return false;
  }
  seconds_out = seconds;
  return true;
}

}  // namespace

bool finish_root_options(const RootOptions& root, GlobalOptions& global, const std::string& where) {
  global.verbosity = root.quiet ? -1 : root.verbose;
  std::optional<double> wait_seconds;
  if (!root.wait_text.empty()) {
    global.wait = true;
    if (!parse_wait_seconds(root.wait_text, where, wait_seconds)) return false;
  }
  // --wait=SECONDS gives up once SECONDS have passed since the command started.
  if (wait_seconds) {
    global.wait_deadline =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(*wait_seconds));
    global.wait_timeout_text = root.wait_text + " s (--wait=" + root.wait_text + ")";
  }
  Result<size_t> env_threads = threads_from_environment();
  if (!env_threads.is_ok()) {
    std::fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", where.c_str(),
                 diagnostic_text(env_threads.status().message()).c_str(), where.c_str());
    return false;
  }
  if (root.threads_option->count() == 0) global.threads = *env_threads;
  // Remote stores (zrec/remote.h); what stops a transfer is the command's Context's
  // (GlobalOptions::context).
  global.remote.cacert = root.cacert;
  global.remote.stall_timeout_s = root.remote_timeout;
  // What the command's remote reads cost, counted in one place for its reports.
  global.remote.stats = std::make_shared<RemoteCounters>();
  global.remote_reads = global.remote.stats;
  return true;
}

}  // namespace zrec::cli
