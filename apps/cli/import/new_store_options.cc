// --codec, --dict and --shards of the appends that create stores (see
// new_store_options.h).
#include "cli/import/new_store_options.h"

#include "cli/option_values.h"
#include "cli/usage.h"
#include "cli/report/console.h"

namespace zrec::cli {

void add_new_store_options(CLI::App* cmd, NewStoreArgs& args, const std::string& which) {
  cmd->add_option("--codec", args.codec, which + ": raw, zstd or zstd_dict (needs --dict)")->capture_default_str();
  cmd->add_option("--dict", args.dict, which + ": zstd dictionary file for --codec zstd_dict");
  cmd->add_option("--shards", args.shards, which + ": data files per store (1..255)")
      ->check(CLI::Range(1, 255))
      ->capture_default_str();
}

Result<CreateOptions> new_store_options(const NewStoreArgs& args, bool checksum, int level) {
  CreateOptions c;
  c.codec = parse_codec_option(args.codec);
  c.warn = log_core_warning;
  c.data_shards = args.shards;
  c.checksum = checksum;
  if (c.checksum && c.codec == Codec::kRaw)
    throw UsageError("--checksum sets zstd frame checksums; a raw store has none");
  if (level != 0 && c.codec == Codec::kRaw) throw UsageError("--level is for zstd and zstd_dict, not raw");
  if (c.codec == Codec::kZstdDict && args.dict.empty())
    throw UsageError("--codec zstd_dict needs --dict FILE (train one with zrec train-dict or zstd --train)");
  if (c.codec != Codec::kZstdDict && !args.dict.empty())
    throw UsageError(std::string("--dict is only used with --codec zstd_dict, not ") + to_string(c.codec));
  if (!args.dict.empty()) {
    ZREC_ASSIGN_OR_RETURN(c.dictionary, read_small_file(args.dict, "dictionary"));
  }
  return c;
}

}  // namespace zrec::cli
