// zrec concat: one store holding the records of several, one after another. How a
// build scales out: parts built in parallel by any scheduler, then concatenated.
#include "cli/commands.h"
#include "cli/transfer_cli.h"

namespace zrec::cli {

Command register_concat(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<TransferArgs>();
  CLI::App* cmd = root.add_subcommand("concat", "Join stores into a new one: SRC1's records, then SRC2's, ...");
  add_transfer_options(cmd, *args);  // DST
  cmd->add_option("sources", args->sources, "Stores to read, in order (SRC...; identical schemas)")->required();
  cmd->footer(
      "Record i of SRC2 becomes record len(SRC1) + i of DST, and so on. The schemas must be\n"
      "identical. DST takes the first source's codec, dictionary and shard count unless\n"
      "--codec, --dict or --shards say otherwise; sources with DST's codec and dictionary\n"
      "have their frames copied verbatim, the others are recompressed. DST is built under a\n"
      "hidden temporary name and renamed into place only when complete.\n\n"
      "Examples:\n"
      "  zrec concat all/ part-0/ part-1/ part-2/\n"
      "  zrec concat all/ part-*/ --shards 16\n"
      "  parallel 'zrec create ... part-{} && zrec append-npy part-{} in-{}.npy' ::: 0 1 2 \\\n"
      "    && zrec concat all/ part-0 part-1 part-2");
  return Command{cmd, [args, &global]() { return run_transfer("concat", *args, global); }};
}

}  // namespace zrec::cli
