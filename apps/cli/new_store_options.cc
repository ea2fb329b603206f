// --codec, --dict, --shards and --level of the appends that create stores (see
// new_store_options.h).
#include "cli/new_store_options.h"

#include "cli/cli_util.h"

namespace zrec::cli {

void add_new_store_options(CLI::App* cmd, NewStoreArgs& args, const std::string& which) {
  cmd->add_option("--codec", args.codec, which + ": raw, zstd or zstd_dict (needs --dict)")->capture_default_str();
  cmd->add_option("--dict", args.dict, which + ": zstd dictionary file for --codec zstd_dict");
  cmd->add_option("--shards", args.shards, which + ": data files per store (1..255)")
      ->check(CLI::Range(1, 255))
      ->capture_default_str();
  cmd->add_option("--level", args.level, "zstd level (default: 3, or 15 with a dictionary)")->check(CLI::Range(1, 22));
}

Result<CreateOptions> new_store_options(const NewStoreArgs& args, bool checksum) {
  CreateOptions c;
  ZREC_ASSIGN_OR_RETURN(c.codec, parse_codec_option(args.codec));
  c.data_shards = args.shards;
  c.checksum = checksum;
  if (c.checksum && c.codec == Codec::kRaw)
    return usage_error("--checksum sets zstd frame checksums; a raw store has none");
  if (c.codec == Codec::kZstdDict && args.dict.empty())
    return usage_error("--codec zstd_dict needs --dict FILE (train one with zrec train-dict or zstd --train)");
  if (c.codec != Codec::kZstdDict && !args.dict.empty())
    return usage_error(std::string("--dict is only used with --codec zstd_dict, not ") + to_string(c.codec));
  if (!args.dict.empty()) {
    ZREC_ASSIGN_OR_RETURN(c.dictionary, read_small_file(args.dict, "dictionary"));
  }
  return c;
}

}  // namespace zrec::cli
