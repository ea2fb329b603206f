// zrec adopt: make stores the streams of a root, the way to grow a root after it was
// built (a label stream computed later, a stream with its own codec or dictionary) and
// to mark a directory of stores that no zrec command built. The protocol is the
// library's (zrec::DatasetWriter with adopt): the root's lock, every stream's, the
// checks, then one commit that lists them.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/remote.h"

#include "cli/app/command.h"
#include "cli/formats/printable.h"
#include "cli/options/json_option.h"
#include "cli/os/interrupt.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

struct AdoptArgs {
  std::string root;
  bool json = false;
};

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + printable(n);
  return out.empty() ? "none" : out;
}

Status run_adopt(const AdoptArgs& a, const GlobalOptions& g) {
  CommandReport report("adopt", g, a.json);
  // Adopting makes nothing: a directory that is missing or holds no store is a mistake
  // (a typo would otherwise become a new, empty root).
  if (is_url(a.root))
    return invalid_argument("'" + redact_url(a.root) +
                            "' is a URL; zrec writes only local roots (adopt commits the "
                            "root's marker)");
  struct stat st {};
  if (::stat(a.root.c_str(), &st) != 0) return io::errno_status(errno, "cannot open", a.root);
  if (!S_ISDIR(st.st_mode)) return invalid_argument("'" + a.root + "' is not a directory");
  if (is_store_dir(a.root))
    return invalid_argument("'" + a.root + "' is a store; adopt makes the stores inside a directory its streams");
  ZREC_ASSIGN_OR_RETURN(const Dataset found, Dataset::open(a.root));
  if (found.stores().empty())
    return invalid_argument("'" + a.root + "' holds no store to adopt (its streams are the stores directly inside it)");
  std::unique_ptr<DatasetWriter> dataset;
  {
    InterruptScope during_lock_wait;  // --wait ends on SIGINT/SIGTERM: 130/143
    DatasetWriterOptions options;
    options.adopt = true;
    ZREC_ASSIGN_OR_RETURN(dataset, DatasetWriter::open(a.root, options, g.context(Work::kWrite)));
  }
  const std::vector<std::string> listed = dataset->found().streams;
  ZREC_ASSIGN_OR_RETURN(const std::vector<StreamCut> cuts, dataset->recover());
  for (const auto& cut : cuts)
    spdlog::warn(
        "cut stream '{}' back from {} to {} records, the root's committed count (an append to the root was "
        "killed before its commit and left them)",
        printable(join_path(a.root, cut.name)), cut.from, dataset->committed_length());
  ZREC_RETURN_IF_ERROR(dataset->close());
  const std::vector<std::string> streams = dataset->stream_names();
  std::vector<std::string> adopted;
  for (const auto& name : streams)
    if (dataset->marked() || !std::binary_search(listed.begin(), listed.end(), name)) adopted.push_back(name);
  const uint64_t length = dataset->committed_length();
  report.set("path", a.root).set("length", length).set("streams", streams).set("adopted", adopted);
  return report.finish("root '" + printable(a.root) + "' has " + std::to_string(streams.size()) + " stream" +
                       (streams.size() == 1 ? "" : "s") + " of " + std::to_string(length) + " samples (" +
                       joined(streams) + "); adopted " + (adopted.empty() ? "none" : joined(adopted)));
}

}  // namespace

Command register_adopt(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<AdoptArgs>();
  CLI::App* cmd = root.add_subcommand("adopt", "Make the stores in a directory the streams of a root");
  cmd->add_option("root", args->root, "Directory of stores: a root, or a directory no zrec command marked")->required();
  add_json_flag(cmd, args->json);
  return Command{cmd, [args, &global]() { return run_adopt(*args, global); }, nullptr};
}

}  // namespace zrec::cli
