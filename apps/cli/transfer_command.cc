// recompress/concat/train-dict shared CLI logic (see transfer_command.h).
#include "cli/transfer_command.h"

#include <cerrno>
#include <chrono>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "zrec/codec_choice.h"
#include "zrec/join.h"
#include "zrec/remote.h"
#include "zrec/store.h"
#include "zrec/transfer.h"

#include "cli/formats/path_name.h"
#include "cli/formats/printable.h"
#include "cli/options/codec_rules.h"
#include "cli/options/json_option.h"
#include "cli/options/level_option.h"
#include "cli/options/option_choices.h"
#include "cli/options/option_values.h"
#include "cli/options/usage_error.h"
#include "cli/options/window_option.h"
#include "cli/os/id_list_file.h"
#include "cli/os/interrupt.h"
#include "cli/os/output_guard.h"
#include "cli/report/byte_size.h"
#include "cli/report/codec_choice_report.h"
#include "cli/report/console.h"
#include "cli/report/progress.h"

namespace zrec::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Sizes in the summaries are all MiB, so that they compare at a glance.

}  // namespace

std::string format_ratio(uint64_t a, uint64_t b) {
  return b == 0 ? "-" : fmt::format("{:.2f}x", double(a) / double(b));
}

void add_train_options(CLI::App* cmd, TrainArgs& args, bool with_size) {
  std::string tiers;
  for (DictTier t : {DictTier::kSmall, DictTier::kBalanced, DictTier::kMax}) {
    const auto& p = dict_tier_preset(t);
    tiers += std::string("\n  ") + p.name + ": " + p.summary;
  }
  auto* tier =
      cmd->add_option("--tier", args.tier, "Dictionary preset: small, balanced or max (default: balanced):" + tiers);
  offer_choices(tier, tier_names());
  if (with_size) {
    auto* size = cmd->add_option("--size", args.size,
                                 "Dictionary size in bytes (K, M suffixes allowed), instead of the tier's; "
                                 "the tier's sample budget and search still apply");
    (void)size;
  }
  (void)tier;
  cmd->add_option("--samples", args.samples, "Sample at most N records (default: the tier's: 20000, 100000, 400000)")
      ->check(CLI::Range(uint64_t{10}, uint64_t{100000000}));
  cmd->add_option("--seed", args.seed, "Seed of the record sample; the same input and seed give the same dictionary")
      ->capture_default_str();
}

Result<TrainOptions> make_train_options(const TrainArgs& args, const GlobalOptions& g, int level) {
  DictTier tier = DictTier::kBalanced;
  if (!args.tier.empty()) {
    tier = *parse_dict_tier(tier_names()[choose(tier_names(), "--tier", args.tier)]);
  }
  TrainOptions o = train_options(tier);
  if (!args.size.empty()) {
    ZREC_ASSIGN_OR_RETURN(o.dict_bytes, parse_byte_size(args.size, "--size"));
    if (o.dict_bytes < 256 || o.dict_bytes > (uint64_t{1} << 30))
      throw UsageError("--size must be between 256 bytes and 1 GiB");
  }
  if (args.samples > 0) o.max_samples = args.samples;
  o.seed = args.seed;
  o.level = level;
  return o;
}

std::string describe_training(const TrainReport& r, uint64_t dict_bytes, uint64_t seed, double seconds) {
  return fmt::format(
      "{} bytes, dictID {}, fastCover k={} d={} (best of {}), from {} of {} records ({}, seed {}) in {:.2f} s; "
      "held-out ratio: zstd {}, zstd_dict {}",
      dict_bytes, r.dict_id, r.k, r.d, r.candidates, r.samples, r.population, format_mib(r.sample_bytes), seed, seconds,
      format_ratio(r.heldout_bytes, r.heldout_zstd), format_ratio(r.heldout_bytes, r.heldout_dict));
}

void training_facts(JsonFacts& f, const TrainReport& r, uint64_t dict_bytes, uint64_t seed) {
  auto ratio = [&](const char* key, uint64_t compressed) {
    if (compressed == 0) f.set_null(key);
    else f.set(key, double(r.heldout_bytes) / double(compressed));
  };
  f.set("dict_bytes", dict_bytes).set("dict_id", uint64_t{r.dict_id});
  f.set("fastcover_k", uint64_t{r.k}).set("fastcover_d", uint64_t{r.d}).set("candidates", uint64_t{r.candidates});
  f.set("source_records", r.population).set("records_sampled", r.samples).set("records_held_out", r.heldout_samples);
  f.set("sample_bytes", r.sample_bytes).set("seed", seed).set("held_out_bytes", r.heldout_bytes);
  ratio("held_out_ratio_zstd", r.heldout_zstd);
  ratio("held_out_ratio_dict", r.heldout_dict);
}

Result<std::vector<uint8_t>> train_with_report(const std::string& command, RecordSource& source,
                                               const TrainOptions& options, const std::string& what,
                                               const GlobalOptions& g, TrainReport* report) {
  auto dict = train_dictionary(source, options, report, g.context(Work::kWrite));
  if (!dict.is_ok()) {
    // Samples read but fewer bytes than the dictionary holds: say which flags shrink it.
    const bool too_few_bytes = report->samples > 0 && report->sample_bytes - report->heldout_bytes < options.dict_bytes;
    const Status s = too_few_bytes ? Status(dict.status().code(),
                                            dict.status().message() + "; give a smaller --size or a smaller --tier")
                                   : dict.status();
    return s.with_context("cannot train a dictionary from " + what);
  }
  for (const auto& w : report->warnings) spdlog::warn("{}", w);
  return dict;
}

void add_transfer_options(CLI::App* cmd, TransferArgs& args) {
  offer_choices(
      cmd->add_option("--codec", args.codec,
                      "Codec of DST: raw, zstd (level 3), zstd_dict (level 15) or auto (chosen from a sample of "
                      "the records) (default: the first source's)"),
      new_codec_names());
  cmd->add_option("--dict", args.dict, "zstd dictionary file for zstd_dict (implies --codec zstd_dict)");
  add_train_options(cmd, args.train, false);
  cmd->add_option("--shards", args.shards, "Data files of DST, 1..255 (default: the first source's)")
      ->check(CLI::Range(1, 255));
  add_level_option(cmd, args.level, "zstd level of DST's records",
                   "the format's: 3, or 15 with a dictionary; an explicit level re-encodes every record");
  add_window_mib_option(cmd, args.window_mib, "window of records");
  cmd->add_flag("--checksum", args.checksum,
                "Every zstd frame of DST carries a content checksum, so verify detects bit rot (default: as "
                "the first source); frames without one are re-encoded");
  add_json_flag(cmd, args.json, "instead of the summary lines");
}

namespace {

// DST's zstd dictionary: --dict's file; else the first zstd_dict source's, unless --tier
// asks for a new one; else one trained from the sources, whose facts go to `trained`.
Status choose_dictionary(const std::string& command, const TransferArgs& a, const GlobalOptions& g,
                         const std::vector<Store*>& sources, const CommandReport& report,
                         std::vector<uint8_t>& dictionary, std::optional<JsonFacts>& trained) {
  if (!a.dict.empty()) {
    ZREC_ASSIGN_OR_RETURN(dictionary, read_dictionary_file(a.dict, "--dict"));
    return Status::ok();
  }
  const Store* with_dict = nullptr;
  for (Store* s : sources)
    if (s->codec() == Codec::kZstdDict && with_dict == nullptr) with_dict = s;
  if (with_dict != nullptr && a.train.tier.empty()) {
    dictionary = with_dict->dictionary();
    spdlog::info("using the dictionary of '{}' ({} bytes)", with_dict->path(), dictionary.size());
    return Status::ok();
  }
  ZREC_ASSIGN_OR_RETURN(TrainOptions to, make_train_options(a.train, g, a.level));
  auto source = store_record_source(sources);
  TrainReport train;
  const std::string what = a.sources.size() == 1 ? "'" + a.sources[0] + "'" : "the sources";
  ZREC_ASSIGN_OR_RETURN(dictionary, train_with_report(command, *source, to, what, g, &train));
  training_facts(trained.emplace(), train, dictionary.size(), to.seed);
  trained->set("elapsed_s", report.elapsed_s());
  report.note("trained a dictionary: " +
              printable(describe_training(train, dictionary.size(), to.seed, report.elapsed_s())));
  return Status::ok();
}

// How DST was filled: its parts placed as whole runs (`joined` holds the placement's
// figures), or built from the sources frame by frame and record by record.
struct Filled {
  TransferStats stats;
  JoinStats joined;
  bool placed = false;
};

// Fills DST from the sources, with a progress meter. Parts whose frames DST would copy
// verbatim, into as many data files as they have, are placed instead: the same store,
// each part's data files copied as whole runs.
Result<Filled> fill_dst(const std::string& command, const TransferArgs& a, const GlobalOptions& g, Work work,
                        const std::vector<Store*>& sources, const CreateOptions& create, bool sources_checksummed) {
  const Store& first = *sources.front();
  uint64_t total_records = 0;
  for (Store* s : sources) total_records += s->length();
  TransferOptions options;
  if (!a.exclude_from.empty()) {
    ZREC_ASSIGN_OR_RETURN(options.skip_ids, read_id_list(a.exclude_from, "--exclude-from", first.length()));
    total_records -= options.skip_ids.size();
  }
  ProgressMeter meter(g, command);
  meter.set_total_records(total_records);
  options.window_bytes = a.window_mib << 20;
  options.frame_copy = a.level == 0 && (!create.checksum || sources_checksummed);
  Context ctx = g.context(work);
  ctx.control.progress = [&](const Progress& p) { meter.update(p.records, p.bytes); };
  WriterOptions writer;
  writer.level = a.level;
  Filled f;
  f.placed = command == "concat" && options.skip_ids.empty() && !a.frame_copy && options.frame_copy &&
             create.codec == first.codec() && create.data_shards == first.data_shards() &&
             create.dictionary == first.dictionary() &&
             placement_mismatch(std::vector<const Store*>(sources.begin(), sources.end())).empty() &&
             std::none_of(sources.begin(), sources.end(), [](const Store* s) { return s->is_remote(); });
  Status s;
  if (f.placed) {
    JoinOptions join;
    join.link_first = a.consume;
    s = join_stores(sources, a.dst, create.checksum, join, &f.joined, ctx);
    f.stats.records = f.stats.frames_copied = f.joined.records;
    f.stats.logical_bytes = f.joined.logical_bytes;
    f.stats.source_stored_bytes = f.stats.stored_bytes = f.joined.stored_bytes;
    f.stats.sources_copied = f.joined.parts;
  } else {
    s = build_from_stores(sources, a.dst, create, writer, options, &f.stats, ctx);
  }
  meter.finish();
  if (s.code() == StatusCode::kCancelled) return cancelled("interrupted; '" + a.dst + "' was not created");
  ZREC_RETURN_IF_ERROR(s);
  return f;
}

}  // namespace

// The keys of a transfer's --json object.
void set_transfer_facts(CommandReport& report, const std::string& command, const TransferArgs& a,
                        const CreateOptions& create, const Filled& filled, const std::optional<JsonFacts>& trained) {
  report.set("path", a.dst).set("sources", a.sources).set("codec", to_string(create.codec));
  report.set("shards", uint64_t{create.data_shards}).set("checksum", create.checksum);
  report.set("dict_bytes", uint64_t{create.dictionary.size()}).set("length", filled.stats.records);
  report.set("logical_bytes", filled.stats.logical_bytes).set("stored_bytes", filled.stats.stored_bytes);
  report.set("source_payload_bytes", filled.stats.source_stored_bytes).set("frames_copied", filled.stats.frames_copied);
  report.set("records_reencoded", filled.stats.records_recoded);
  if (command == "concat") {
    report.set("parts_placed", filled.joined.parts).set("bytes_cloned", filled.joined.bytes_cloned);
    report.set("bytes_linked", filled.joined.bytes_linked).set("sources_removed", a.consume);
  }
  if (trained) report.set_json("training", trained->object());
  else report.set_null("training");
}

// The summary line: what DST is, how much was copied or re-encoded, how fast.
std::string transfer_summary(const TransferArgs& a, const CreateOptions& create, const TransferStats& stats,
                             const std::string& placed, double secs) {
  return fmt::format(
      "wrote '{}' ({}, {} shard{}): {} records, {} logical, {} stored ({}; sources {}, {}); "
      "{} frames copied, {} records re-encoded{}; {:.2f} s, {:.1f} MiB/s logical{}",
      printable(a.dst), to_string(create.codec), create.data_shards, create.data_shards == 1 ? "" : "s", stats.records,
      format_mib(stats.logical_bytes), format_mib(stats.stored_bytes),
      format_ratio(stats.logical_bytes, stats.stored_bytes), format_mib(stats.source_stored_bytes),
      format_ratio(stats.logical_bytes, stats.source_stored_bytes), stats.frames_copied, stats.records_recoded, placed,
      secs, secs > 0 ? stats.logical_bytes / 1048576.0 / secs : 0.0, a.consume ? "; sources removed" : "");
}

Status run_transfer(const std::string& command, TransferArgs& a, const GlobalOptions& g) {
  // Usage first, then the destination, then the sources: nothing heavy before all three.
  std::optional<Codec> codec;
  bool automatic = false;  // --codec auto: chosen from a sample of the sources
  if (!a.codec.empty()) {
    const NewCodec given = parse_new_codec(a.codec);
    codec = given.codec;
    automatic = given.automatic;
  } else if (!a.dict.empty()) {
    codec = Codec::kZstdDict;
  }
  // A codec given (or implied by --dict) is checked before anything is opened; one taken
  // from the first source, once it is known (below).
  if (codec)
    check_codec_options({.codec = *codec,
                         .automatic = automatic,
                         .dict = !a.dict.empty(),
                         .tier = !a.train.tier.empty(),
                         .level = a.level,
                         .checksum = a.checksum});
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.dst, "DST", a.sources));
  ZREC_RETURN_IF_ERROR(refuse_existing_destination(a.dst));

  InterruptScope interrupt_scope;
  CommandReport report(command, g, a.json);
  // The lane budget (docs/format.md §9): copying frames is reading them and checking
  // them, decoding zstd frames in full, so a transfer that asks for no encoding runs on
  // the read budget (2 lanes on 2 cores, where writes get 1); one given --codec,
  // --level, --checksum or --tier may encode, and runs on the write budget.
  const Work work = !codec && a.level == 0 && !a.checksum && a.train.tier.empty() ? Work::kRead : Work::kWrite;
  // Sources to consume are held exclusively from here until they are removed: no writer
  // may change them meanwhile (DST's data files may be hard links to the first one's).
  // They are then opened under that lock, as a snapshot.
  std::vector<std::unique_ptr<ConsumedStore>> consumed;
  for (const auto& path : a.consume ? a.sources : std::vector<std::string>()) {
    if (is_url(path))
      throw UsageError("--consume removes its sources, and '" + redact_url(path) +
                       "' is a URL: zrec writes only local stores");
    ZREC_ASSIGN_OR_RETURN(auto c, ConsumedStore::lock(path, g.context(work)));
    consumed.push_back(std::move(c));
  }
  std::vector<std::unique_ptr<Store>> stores;
  std::vector<Store*> sources;
  for (const auto& path : a.sources) {
    Context ctx = is_url(path) ? g.read_context(path) : g.context(work);
    if (a.consume) ctx.wait = {};  // this process holds the lock (ConsumedStore): a snapshot
    ctx.snapshot_if_busy = a.consume;
    ZREC_ASSIGN_OR_RETURN(auto s, Store::open(path, {}, ctx));
    sources.push_back(s.get());
    stores.push_back(std::move(s));
  }
  Store& first = *sources.front();
  for (Store* s : sources) {
    const std::string diff = schema_difference(first.schema(), s->schema());
    if (!diff.empty())
      return invalid_argument("schema of '" + s->path() + "' differs from '" + first.path() + "': " + diff);
  }

  std::optional<JsonFacts> trained;  // the dictionary trained for DST, if one was
  CreateOptions create;
  create.schema = first.schema();
  create.codec = codec.value_or(first.codec());
  create.data_shards = a.shards != 0 ? a.shards : first.data_shards();
  if (!codec)
    check_codec_options(
        {.codec = create.codec, .tier = !a.train.tier.empty(), .level = a.level, .checksum = a.checksum});
  // DST keeps the first source's checksum setting unless --checksum turns it on. Copied
  // frames keep their own, so frames are copied only from sources that have checksums
  // when DST wants them (judged by record 0, as writers do).
  create.checksum = create.codec != Codec::kRaw && (a.checksum || first.checksum());
  bool sources_checksummed = true;
  for (Store* s : sources) sources_checksummed = sources_checksummed && s->checksum();
  std::optional<CodecChoice> chosen;
  if (automatic) {
    auto source = store_record_source(sources);
    ZREC_ASSIGN_OR_RETURN(chosen, choose_codec(*source, g.context(work)));
    create.codec = chosen->codec;
    create.dictionary = chosen->dictionary;
    create.checksum = create.checksum && create.codec != Codec::kRaw;
    report.note(codec_choice_line(a.dst, *chosen));
  } else if (create.codec == Codec::kZstdDict) {
    ZREC_RETURN_IF_ERROR(choose_dictionary(command, a, g, sources, report, create.dictionary, trained));
  }

  const auto copy_started = std::chrono::steady_clock::now();
  ZREC_ASSIGN_OR_RETURN(const Filled filled, fill_dst(command, a, g, work, sources, create, sources_checksummed));
  const TransferStats& stats = filled.stats;
  const JoinStats& joined = filled.joined;
  const bool place = filled.placed;

  const double secs = seconds_since(copy_started);
  set_transfer_facts(report, command, a, create, filled, trained);
  if (automatic) report.set_json("codec_choice", codec_choice_facts(*chosen).object());
  std::string placed;
  if (place)
    placed = fmt::format(" ({} parts placed as whole runs: {} cloned, {} linked)", joined.parts,
                         format_mib(joined.bytes_cloned), format_mib(joined.bytes_linked));
  if (a.consume) {
    // DST is complete and in place: the sources go, the first one (whose data files DST
    // may share) first. Their locks were held throughout.
    sources.clear();
    stores.clear();
    for (size_t k = 0; k < consumed.size(); ++k) {
      Status removed = consumed[k]->remove();
      if (!removed.is_ok())
        return removed.with_context("'" + a.dst + "' was created, but the source '" + a.sources[k] +
                                    "' was not removed");
    }
  }
  return report.finish(transfer_summary(a, create, stats, placed, secs));
}

RootTransferArgs root_transfer_args(const TransferArgs& a) {
  return {a.dst,         a.sources,  a.codec, a.shards,        a.level,
          a.window_mib,  a.checksum, a.json,  a.stream_codecs, !a.dict.empty() || !a.train.tier.empty() || a.consume,
          a.exclude_from};
}

}  // namespace zrec::cli
