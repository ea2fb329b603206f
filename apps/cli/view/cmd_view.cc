// zrec view: a local, read-only web page of stores and roots of named streams. Opens the
// PATHs (view_catalog.h), draws a random token (access_guard.h), loads the HTTP server
// module (http_module.h), prints the URL, and serves (view_routes.h) until SIGINT or
// SIGTERM, then exits 130 or 143 like every command.
#include <arpa/inet.h>

#include <cstdio>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "cli/app/command.h"
#include "cli/formats/printable.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/os/side_file.h"
#include "cli/view/access_guard.h"
#include "cli/view/byte_budget.h"
#include "cli/view/card_names.h"
#include "cli/view/http_module.h"
#include "cli/view/verify_jobs.h"
#include "cli/view/view_catalog.h"
#include "cli/view/view_routes.h"

namespace zrec::cli {

namespace {

using namespace view;

struct ViewArgs {
  std::vector<std::string> paths;
  std::string bind = "127.0.0.1";
  uint32_t port = 0;  // 0..65535
  std::vector<std::string> keys;
  std::vector<std::string> labels;  // --labels STREAM=FILE
  std::vector<std::string> vocabs;  // --vocab STREAM=FILE
};

// A --labels file (class names, one per line: line i names value i, as torchvision's
// and Keras' classes.txt are written) or a --vocab file (tokens, one per line: line i
// is token i, as a tokenizer's vocab.txt): lines of STREAM=FILE specs, by stream. At
// most kMaxNamesFileBytes each.
constexpr uint64_t kMaxNamesFileBytes = uint64_t{16} << 20;

Result<std::map<std::string, LineList>> read_names_files(const std::vector<std::string>& specs, const char* option,
                                                         const char* example) {
  std::map<std::string, LineList> out;
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError(std::string(option) + " '" + printable(spec) + "': expected STREAM=FILE, e.g. " + option + " " +
                       example);
    const std::string stream = spec.substr(0, eq), file = spec.substr(eq + 1);
    if (out.count(stream) > 0)  // a second FILE for a stream is a mistake in a script, not an override
      throw UsageError(std::string(option) + " '" + printable(spec) + "': the stream '" + printable(stream) +
                       "' has a file already; give one " + option + " per STREAM");
    ZREC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_side_file(file, option, kMaxNamesFileBytes));
    out[stream] = LineList(std::move(bytes));
  }
  return out;
}

// A STREAM of --labels or --vocab that no PATH shows (vocab toks= for tokens) would name
// nothing, silently: a usage error that lists the streams there are.
void check_streams_named(const Catalog& catalog, const std::vector<std::string>& specs, const char* option) {
  std::set<std::string> streams;
  for (const ViewPath& p : catalog.paths())
    for (const ViewStream& s : p.streams) streams.insert(s.name);
  for (const std::string& spec : specs) {
    const std::string stream = spec.substr(0, spec.find('='));
    if (streams.count(stream) > 0) continue;
    std::string list;
    for (const std::string& name : streams) list += (list.empty() ? "" : ", ") + printable(name);
    throw UsageError(std::string(option) + " '" + printable(spec) + "': '" + printable(stream) +
                     "' is not one of the streams (" + list + ")");
  }
}

// Requests handled at once; each also may hold one open Store per stream it reads.
constexpr unsigned kWorkers = 8;
// Record bytes held in memory by all requests together (byte_budget.h).
constexpr uint64_t kRecordBudgetBytes = uint64_t{512} << 20;

bool is_loopback(const std::string& address) {
  in_addr v4;
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return address == "::1";
}

struct Listening {
  AccessGuard* guard;
  size_t paths;
};

void on_listening(void* context, uint16_t port) {
  auto* l = static_cast<Listening*>(context);
  l->guard->set_port(port);
  // The URL is the command's output (stdout); how to stop it is a note (stderr).
  std::printf("%s\n", l->guard->url().c_str());
  std::fflush(stdout);
  spdlog::info("serving {} PATH{} read-only; Ctrl-C stops", l->paths, l->paths == 1 ? "" : "s");
  std::fprintf(stderr, "zrec view: open %s in a browser; Ctrl-C stops\n", l->guard->url().c_str());
}

Status run_view(const ViewArgs& a, const GlobalOptions& g) {
  if (a.keys.size() > a.paths.size())
    throw UsageError(fmt::format("{} --keys for {} PATH{}: give at most one --keys per PATH, in the same order",
                                 a.keys.size(), a.paths.size(), a.paths.size() == 1 ? "" : "s"));
  in_addr v4;
  in6_addr v6;
  if (::inet_pton(AF_INET, a.bind.c_str(), &v4) != 1 && ::inet_pton(AF_INET6, a.bind.c_str(), &v6) != 1)
    throw UsageError("--bind '" + printable(a.bind) + "' is not a numeric IPv4 or IPv6 address");

  ZREC_ASSIGN_OR_RETURN(auto labels, read_names_files(a.labels, "--labels", "cls=classes.txt"));
  ZREC_ASSIGN_OR_RETURN(auto vocab_lines, read_names_files(a.vocabs, "--vocab", "tokens=vocab.txt"));
  Vocabularies vocabs;
  for (auto& [stream, tokens] : vocab_lines) vocabs.emplace(stream, Vocabulary(std::move(tokens)));
  InterruptScope interruptible;  // SIGINT/SIGTERM stop the server: 130/143
  const Context ctx = g.context(Work::kRead);
  ZREC_ASSIGN_OR_RETURN(auto catalog, Catalog::open(a.paths, a.keys, kWorkers, ctx));
  check_streams_named(*catalog, a.labels, "--labels");
  check_streams_named(*catalog, a.vocabs, "--vocab");
  ZREC_RETURN_IF_ERROR(add_card_names(*catalog, ctx, labels, vocabs));
  ZREC_ASSIGN_OR_RETURN(std::string token, AccessGuard::new_token());
  ZREC_ASSIGN_OR_RETURN(ServeFunction serve, load_http_module());
  if (!is_loopback(a.bind))
    spdlog::warn(
        "listening on {}, not on this machine alone: whoever can reach it and has the URL (its token) can read "
        "these stores",
        printable(a.bind));

  AccessGuard guard(token, a.bind);
  ByteBudget budget(kRecordBudgetBytes);
  VerifyJobs jobs(ctx);
  ViewRoutes routes(*catalog, guard, jobs, budget, std::move(labels), std::move(vocabs));
  Listening listening{&guard, a.paths.size()};
  ServeConfig config;
  config.address = a.bind;
  config.port = static_cast<uint16_t>(a.port);
  config.limits.workers = kWorkers;
  config.default_headers = AccessGuard::security_headers();
  config.handler = &routes;
  config.stop_fd = ctx.control.cancel.wake_fd;
  config.on_listening = on_listening;
  config.on_listening_context = &listening;
  std::string error;
  if (serve(&config, &error) != 0) return io_error(error);
  return cancelled("stopped");
}

}  // namespace

Command register_view(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<ViewArgs>();
  CLI::App* cmd = root.add_subcommand("view", "Look at stores in a web browser (a local, read-only page)");
  cmd->add_option("path", args->paths, "Stores, or directories of named streams, to show (each is one tab)")
      ->required();
  cmd->add_option("--bind", args->bind,
                  "Numeric address to listen on; another than a loopback one (127.0.0.1, ::1) is reachable from "
                  "elsewhere and warned about")
      ->type_name("ADDRESS")
      ->capture_default_str();
  cmd->add_option("--port", args->port, "TCP port to listen on, 0..65535; 0 picks a free one")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("--keys", args->keys,
                  "Sample keys of the i-th PATH for the i-th --keys (an empty FILE skips a PATH): one key per line, as "
                  "append-tar --keys writes")
      ->allow_extra_args(false);  // one FILE per --keys: PATHs may follow
  cmd->add_option("--labels", args->labels,
                  "STREAM=FILE: class names for the stream of that name (or the store of that base name), one per "
                  "line (line i names value i), shown with its value histogram")
      ->type_name("STREAM=FILE")
      ->allow_extra_args(false);
  cmd->add_option("--vocab", args->vocabs,
                  "STREAM=FILE: the vocabulary of a stream of token IDs, one token per line (line i is token i, as "
                  "a tokenizer's vocab.txt): its records are also shown as the text they encode")
      ->type_name("STREAM=FILE")
      ->allow_extra_args(false);
  return Command{cmd, [args, &global]() { return run_view(*args, global); }};
}

}  // namespace zrec::cli
