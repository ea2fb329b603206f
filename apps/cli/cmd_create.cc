// zrec create: make and publish an empty store.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "zrec/store_writer.h"

#include "cli/app/command.h"
#include "cli/options/codec_rules.h"
#include "cli/options/json_option.h"
#include "cli/options/option_choices.h"
#include "cli/options/option_values.h"
#include "cli/options/usage_error.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"

namespace zrec::cli {

namespace {

struct CreateArgs {
  std::string store;
  bool dense = false, ragged = false;
  std::string dtype, shape, codec, dict;  // codec empty: default_codec
  uint32_t ndim = 0;
  uint32_t shards = 4;
  bool checksum = false;
  bool json = false;
};

Status run_create(const CreateArgs& a, const GlobalOptions& g) {
  CommandReport report("create", g, a.json);
  CreateOptions options;
  auto dtype = parse_dtype(a.dtype);
  if (!dtype.is_ok()) throw UsageError(dtype.status().message());
  options.schema.dtype = dtype.value();
  if (a.dense) {
    auto shape = parse_shape(a.shape);
    options.schema.ndim = static_cast<uint32_t>(shape.size());
    options.schema.item_shape = std::move(shape);
  } else {
    if (a.ndim < 1) throw UsageError("--ragged needs --ndim N (N >= 1)");
    options.schema.ndim = a.ndim;
  }
  Status valid = options.schema.validate();
  if (!valid.is_ok()) throw UsageError(valid.message());
  const NewCodec codec = a.codec.empty() ? NewCodec{default_codec(options.schema, a.checksum || !a.dict.empty())}
                                         : parse_new_codec(a.codec);
  options.codec = codec.codec;
  options.codec_auto = codec.automatic;
  options.data_shards = a.shards;
  check_codec_options({.codec = options.codec,
                       .automatic = codec.automatic,
                       .dict = !a.dict.empty(),
                       .checksum = a.checksum,
                       .dict_required = true});
  options.checksum = a.checksum;
  if (!a.dict.empty()) {
    ZREC_ASSIGN_OR_RETURN(options.dictionary, read_dictionary_file(a.dict, "--dict"));
  }
  ZREC_RETURN_IF_ERROR(create_store(a.store, options, g.context(Work::kWrite)));
  const std::string codec_name = codec.automatic ? kAutoCodecName : to_string(options.codec);
  report.set("path", a.store).set_schema(options.schema).set("codec", codec_name);
  report.set("shards", uint64_t{options.data_shards}).set("checksum", options.checksum);
  report.set("dict_bytes", uint64_t{options.dictionary.size()}).set("length", uint64_t{0});
  return report.finish(fmt::format("created '{}': {}, codec {}, {} shard{}", a.store, options.schema.describe(),
                                   codec_name, options.data_shards, options.data_shards == 1 ? "" : "s"),
                       CommandReport::Level::kVerbose);
}

}  // namespace

Command register_create(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<CreateArgs>();
  CLI::App* cmd = root.add_subcommand("create", "Create and publish an empty store");
  cmd->add_option("store", args->store, "Store directory to create (must not exist, or be empty)")->required();
  auto* dense = cmd->add_flag("--dense", args->dense, "Every record has the same shape (--shape)");
  auto* ragged = cmd->add_flag("--ragged", args->ragged, "Records have --ndim dims each, lengths free");
  dense->excludes(ragged);
  ragged->excludes(dense);
  offer_choices(
      cmd->add_option("--dtype", args->dtype, "NumPy dtype: <i4, |u1, float32, uint8, <U8, <M8[ns], ...")->required(),
      dtype_names());
  auto* shape = cmd->add_option("--shape", args->shape,
                                "Dense item shape: 28,28 or (3,224,224); '()' or 'scalar' for one value per record")
                    ->needs(dense);
  cmd->add_option("--ndim", args->ndim, "Ragged: number of dims of every record (>= 1)")->needs(ragged);
  offer_choices(cmd->add_option("--codec", args->codec,
                                "raw, zstd (level 3), zstd_dict (level 15, needs --dict) or auto (the first "
                                "append measures its records and chooses); default raw for Dense records of " +
                                    std::to_string(kSmallRecordBytes) +
                                    " bytes or fewer (a zstd frame would store more), zstd otherwise"),
                new_codec_names());
  cmd->add_flag("--checksum", args->checksum,
                "Every zstd frame carries a content checksum, so verify detects bit rot (appends keep it)");
  cmd->add_option("--dict", args->dict, "zstd dictionary file (dict.zr) for --codec zstd_dict");
  cmd->add_option("--shards", args->shards, "Data files; record i goes to data_{i % shards}.zr (1..255)")
      ->check(CLI::Range(1, 255))
      ->capture_default_str();
  add_json_flag(cmd, args->json);
  return Command{cmd, [args, shape, &global]() {
                   if (!args->dense && !args->ragged)
                     throw UsageError("give --dense (with --shape) or --ragged (with --ndim)");
                   if (args->dense && shape->count() == 0)
                     throw UsageError("--dense needs --shape (use --shape scalar for one value per record)");
                   return run_create(*args, global);
                 }};
}

}  // namespace zrec::cli
