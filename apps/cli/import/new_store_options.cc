// --codec, --dict and --shards of the appends that create stores (see
// new_store_options.h).
#include "cli/import/new_store_options.h"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/import/append_session.h"
#include "cli/options/codec_rules.h"
#include "cli/options/option_choices.h"
#include "cli/options/option_values.h"
#include "cli/options/usage_error.h"
#include "cli/report/console.h"

namespace zrec::cli {

void add_new_store_options(CLI::App* cmd, NewStoreArgs& args, const std::string& which) {
  offer_choices(cmd->add_option("--codec", args.codec,
                                which +
                                    ": raw, zstd, zstd_dict (needs --dict) or auto (the first window chooses); "
                                    "default raw for Dense records of " +
                                    std::to_string(kSmallRecordBytes) + " bytes or fewer, zstd otherwise"),
                new_codec_names());
  cmd->add_option("--dict", args.dict, which + ": zstd dictionary file for --codec zstd_dict");
  cmd->add_option("--shards", args.shards, which + ": data files per store (1..255)")
      ->check(CLI::Range(1, 255))
      ->capture_default_str();
}

void add_create_options(CLI::App* cmd, bool& create, NewStoreArgs& args, const std::string& how) {
  CLI::Option* flag = cmd->add_flag("--create", create, "Create STORE " + how + " when it does not exist");
  add_new_store_options(cmd, args, "The new store");
  for (const char* name : {"--codec", "--dict", "--shards"}) cmd->get_option(name)->needs(flag);
}

Result<CreateOptions> new_store_options(const NewStoreArgs& args, bool checksum, int level) {
  CreateOptions c;
  const NewCodec codec = args.codec.empty() ? NewCodec{} : parse_new_codec(args.codec);
  c.codec = codec.codec;
  c.codec_auto = codec.automatic;
  c.data_shards = args.shards;
  c.checksum = checksum;
  check_codec_options({.codec = c.codec,
                       .automatic = codec.automatic,
                       .dict = !args.dict.empty(),
                       .level = level,
                       .checksum = checksum,
                       .dict_required = true});
  if (!args.dict.empty()) {
    ZREC_ASSIGN_OR_RETURN(c.dictionary, read_dictionary_file(args.dict, "--dict"));
  }
  return c;
}

void set_new_store_codec(CreateOptions& c, const NewStoreArgs& args, bool checksum, int level) {
  if (args.codec.empty()) c.codec = default_codec(c.schema, checksum || level != 0 || !args.dict.empty());
}

Status CreatedStore::create(const CreateOptions& options, const Context& ctx) {
  ZREC_RETURN_IF_ERROR(create_store(path_, options, ctx));
  created_ = true;
  return Status::ok();
}

Status CreatedStore::take_back(Status failed) const {
  if (created_) {
    Status s = remove_empty_store(path_);
    if (!s.is_ok()) spdlog::warn("left the store '{}' this run created: {}", path_, s.message());
  }
  return failed;
}

Status CreatedStore::finish(std::unique_ptr<AppendSession> session, Status s) const {
  Status result = session->finish(std::move(s));
  if (result.is_ok() || session->writer().published_length() > 0) return result;
  session.reset();  // lets the store's lock go
  return take_back(std::move(result));
}

}  // namespace zrec::cli
