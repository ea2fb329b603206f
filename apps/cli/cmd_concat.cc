// zrec concat: one store holding the records of several, one after another. How a
// build scales out: parts built in parallel by any scheduler, then concatenated.
#include <sys/stat.h>

#include <spdlog/spdlog.h>

#include "zrec/dataset.h"

#include "cli/commands.h"
#include "cli/formats/printable.h"
#include "cli/transfer_command.h"
#include "cli/usage.h"

namespace zrec::cli {

namespace {

bool exists(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

// SRC... DST, as cp takes them. Until the next release the old order DST SRC... still
// works, but only where it cannot mean anything else: the first argument does not exist
// and the last one is a store. Read in the new order, such a call could only fail (its
// DST exists and its first SRC does not), so no call that works in the new order ever
// changes meaning. Everywhere else the new order applies.
Status split_stores(const std::vector<std::string>& stores, TransferArgs& args) {
  if (stores.size() < 2) throw UsageError("give the stores to join and then the store to create: SRC... DST");
  const bool old_order = !exists(stores.front()) && is_store_dir(stores.back());
  if (old_order) {
    args.dst = stores.front();
    args.sources.assign(stores.begin() + 1, stores.end());
    spdlog::warn(
        "the order 'concat DST SRC...' is deprecated and will stop working in the next release; "
        "write 'zrec concat SRC... DST' (this call creates '{}')",
        printable(args.dst));
  } else {
    args.dst = stores.back();
    args.sources.assign(stores.begin(), stores.end() - 1);
  }
  return Status::ok();
}

}  // namespace

Command register_concat(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<TransferArgs>();
  auto stores = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = root.add_subcommand("concat", "Join stores into a new one: SRC1's records, then SRC2's, ...");
  cmd->add_option(
         "stores", *stores,
         "Stores to read, in order (SRC...; identical schemas), then the store to create (DST; must not exist)")
      ->required();
  add_transfer_options(cmd, *args);
  cmd->footer(
      "Record i of SRC2 becomes record len(SRC1) + i of DST, and so on. The schemas must be\n"
      "identical. DST takes the first source's codec, dictionary and shard count unless\n"
      "--codec, --dict or --shards say otherwise; sources with DST's codec and dictionary\n"
      "have their frames copied verbatim, the others are recompressed. DST is built under a\n"
      "hidden temporary name and renamed into place only when complete.\n\n"
      "The sources come first and DST last, as with cp. The old order, DST first, still works\n"
      "with a warning until the next release, when the first argument does not exist and the\n"
      "last is a store; in every other case the last argument is DST.\n\n"
      "Examples:\n"
      "  zrec concat part-0/ part-1/ part-2/ all/\n"
      "  zrec concat part-*/ all/ --shards 16\n"
      "  parallel 'zrec create ... part-{} && zrec append-npy part-{} in-{}.npy' ::: 0 1 2 \\\n"
      "    && zrec concat part-0 part-1 part-2 all/");
  return Command{cmd, [args, stores, &global]() {
                   ZREC_RETURN_IF_ERROR(split_stores(*stores, *args));
                   return run_transfer("concat", *args, global);
                 }};
}

}  // namespace zrec::cli
