// zrec recompress: copy a store into a new one with another codec, dictionary, level
// or shard count; same records, same order. DST appears only when complete.
#include <CLI/CLI.hpp>

#include "cli/app/command.h"
#include "cli/roots/root_transfer.h"
#include "cli/transfer_command.h"

namespace zrec::cli {

Command register_recompress(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<TransferArgs>();
  auto src = std::make_shared<std::string>();
  CLI::App* cmd =
      root.add_subcommand("recompress", "Copy a store into a new one with another codec, dictionary or shard count");
  cmd->add_option("src", *src,
                  "Store to read (SRC; only read, under its shared lock), or a root of named streams: each committed "
                  "stream recompressed into the root DST")
      ->required();
  cmd->add_option("dst", args->dst, "Store (or root) to create (DST; must not exist)")->required();
  add_transfer_options(cmd, *args);
  add_stream_codec_option(cmd, args->stream_codecs);
  cmd->add_option("--exclude-from", args->exclude_from,
                  "Leave out the samples whose IDs FILE lists, one per line (\"-\": stdin; e.g. the drop list of "
                  "zrec duplicates); the rest keep their order")
      ->type_name("FILE");
  return Command{cmd, [args, src, &global]() {
                   args->sources = {*src};
                   if (any_root(args->sources, global))
                     return run_root_transfer("recompress", root_transfer_args(*args), global);
                   return run_transfer("recompress", *args, global);
                 }};
}

}  // namespace zrec::cli
