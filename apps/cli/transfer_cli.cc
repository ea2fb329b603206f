// recompress/concat/train-dict shared CLI logic (see transfer_cli.h).
#include "cli/transfer_cli.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <fmt/format.h>

#include "cli/cli_util.h"
#include "cli/interrupt.h"
#include "cli/level_option.h"
#include "cli/progress.h"
#include "zrec/store.h"
#include "zrec/transfer.h"
#include "cli/output_guard.h"
#include "cli/printable.h"

namespace zrec::cli {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string mib(uint64_t bytes) { return fmt::format("{:.1f} MiB", bytes / 1048576.0); }

}  // namespace

Result<uint64_t> parse_byte_size(std::string_view text, const std::string& what) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, text.data() + text.size() - end);
  uint64_t scale = 1;
  if (unit == "" || unit == "B") scale = 1;
  else if (unit == "K" || unit == "KiB" || unit == "k") scale = uint64_t{1} << 10;
  else if (unit == "M" || unit == "MiB") scale = uint64_t{1} << 20;
  else if (unit == "G" || unit == "GiB") scale = uint64_t{1} << 30;
  else scale = 0;
  if (ec != std::errc() || end == text.data() || scale == 0 || value > UINT64_MAX / scale)
    return usage_error("invalid " + what + " '" + std::string(text) + "' (bytes, or with K, M or G: 112640, 110K, 1M)");
  return value * scale;
}

std::string format_ratio(uint64_t a, uint64_t b) { return b == 0 ? "-" : fmt::format("{:.2f}x", double(a) / double(b)); }

void add_train_options(CLI::App* cmd, TrainArgs& args, bool with_size) {
  std::string tiers;
  for (DictTier t : {DictTier::kSmall, DictTier::kBalanced, DictTier::kMax}) {
    const auto& p = dict_tier_preset(t);
    tiers += std::string("\n  ") + p.name + ": " + p.summary;
  }
  auto* tier = cmd->add_option("--tier", args.tier, "Dictionary preset: small, balanced (default) or max:" + tiers);
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
    auto t = parse_dict_tier(args.tier);
    if (!t) return usage_error("unknown --tier '" + args.tier + "' (use small, balanced or max)");
    tier = *t;
  }
  TrainOptions o = train_options(tier);
  if (!args.size.empty()) {
    ZREC_ASSIGN_OR_RETURN(o.dict_bytes, parse_byte_size(args.size, "--size"));
    if (o.dict_bytes < 256 || o.dict_bytes > (uint64_t{1} << 30))
      return usage_error("--size must be between 256 bytes and 1 GiB");
  }
  if (args.samples > 0) o.max_samples = args.samples;
  o.seed = args.seed;
  o.threads = g.threads;
  o.level = level;
  return o;
}

std::string describe_training(const TrainReport& r, uint64_t dict_bytes, uint64_t seed, double seconds) {
  return fmt::format(
      "{} bytes, dictID {}, fastCover k={} d={} (best of {}), from {} of {} records ({}, seed {}) in {:.2f} s; "
      "held-out ratio: zstd {}, zstd_dict {}",
      dict_bytes, r.dict_id, r.k, r.d, r.candidates, r.samples, r.population, mib(r.sample_bytes), seed, seconds,
      format_ratio(r.heldout_bytes, r.heldout_zstd), format_ratio(r.heldout_bytes, r.heldout_dict));
}

Result<std::vector<uint8_t>> train_with_report(const std::string& command, RecordSource& source,
                                               const TrainOptions& options, const std::string& what,
                                               const GlobalOptions& g, TrainReport* report) {
  auto dict = train_dictionary(source, options, report);
  if (!dict.is_ok()) return dict.status().with_context("cannot train a dictionary from " + what);
  for (const auto& w : report->warnings) spdlog::warn("{}", w);
  return dict;
}

void add_transfer_options(CLI::App* cmd, TransferArgs& args) {
  cmd->add_option("--codec", args.codec,
                  "Codec of DST: raw, zstd (level 3) or zstd_dict (level 15) (default: the first source's)");
  cmd->add_option("--dict", args.dict, "zstd dictionary file for zstd_dict (implies --codec zstd_dict)");
  add_train_options(cmd, args.train, false);
  cmd->add_option("--shards", args.shards, "Data files of DST, 1..255 (default: the first source's)")
      ->check(CLI::Range(1, 255));
  add_level_option(cmd, args.level, "zstd level of DST's records",
                   "the format's: 3, or 15 with a dictionary; an explicit level re-encodes every record");
  cmd->add_option("--window-mib", args.window_mib, "Memory budget of one window of records, MiB")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_flag("--checksum", args.checksum,
                "Every zstd frame of DST carries a content checksum, so verify detects bit rot (default: as "
                "the first source); frames without one are re-encoded");
}

Status run_transfer(const std::string& command, TransferArgs& a, const GlobalOptions& g) {
  // Usage first, then the destination, then the sources: nothing heavy before all three.
  std::optional<Codec> codec;
  if (!a.codec.empty()) {
    ZREC_ASSIGN_OR_RETURN(codec, parse_codec_option(a.codec));
  } else if (!a.dict.empty()) {
    codec = Codec::kZstdDict;
  }
  if (codec && *codec != Codec::kZstdDict && !a.dict.empty())
    return usage_error(std::string("--dict is only used with --codec zstd_dict, not ") + to_string(*codec));
  if (codec && *codec != Codec::kZstdDict && !a.train.tier.empty())
    return usage_error(std::string("--tier is only used with --codec zstd_dict, not ") + to_string(*codec));
  if (!a.dict.empty() && !a.train.tier.empty()) return usage_error("give --dict FILE or --tier, not both");
  if (codec && *codec == Codec::kRaw && a.level != 0) return usage_error("--level is for zstd and zstd_dict, not raw");
  if (codec && *codec == Codec::kRaw && a.checksum)
    return usage_error("--checksum sets zstd frame checksums; a raw store has none");
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.dst, "DST", a.sources));
  {
    std::string dst = a.dst;
    while (dst.size() > 1 && dst.back() == '/') dst.pop_back();
    struct stat st;
    if (::lstat(dst.c_str(), &st) == 0)
      return Status(StatusCode::kAlreadyExists, "'" + a.dst + "' already exists; choose a new destination");
  }

  InterruptScope interrupt_scope;
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Store>> stores;
  std::vector<Store*> sources;
  for (const auto& path : a.sources) {
    ZREC_ASSIGN_OR_RETURN(auto s, Store::open(path, {.threads = g.threads, .wait = g.wait}));
    sources.push_back(s.get());
    stores.push_back(std::move(s));
  }
  Store& first = *sources.front();
  for (Store* s : sources) {
    const std::string diff = schema_difference(first.schema(), s->schema());
    if (!diff.empty())
      return invalid_argument("schema of '" + s->path() + "' differs from '" + first.path() + "': " + diff);
  }

  CreateOptions create;
  create.schema = first.schema();
  create.codec = codec.value_or(first.codec());
  create.data_shards = a.shards != 0 ? a.shards : first.data_shards();
  if (create.codec == Codec::kRaw && a.level != 0) return usage_error("--level is for zstd and zstd_dict, not raw");
  if (create.codec == Codec::kRaw && a.checksum)
    return usage_error("--checksum sets zstd frame checksums; a raw store has none");
  // DST keeps the first source's checksum setting unless --checksum turns it on. Copied
  // frames keep their own, so frames are copied only from sources that have checksums
  // when DST wants them (judged by record 0, as writers do).
  create.checksum = create.codec != Codec::kRaw && (a.checksum || first.checksum());
  bool sources_checksummed = true;
  for (Store* s : sources) sources_checksummed = sources_checksummed && s->checksum();
  if (create.codec == Codec::kZstdDict) {
    if (!a.dict.empty()) {
      ZREC_ASSIGN_OR_RETURN(create.dictionary, read_small_file(a.dict, "dictionary"));
    } else {
      const Store* with_dict = nullptr;
      for (Store* s : sources)
        if (s->codec() == Codec::kZstdDict && with_dict == nullptr) with_dict = s;
      if (with_dict != nullptr && a.train.tier.empty()) {
        create.dictionary = with_dict->dictionary();
        spdlog::info("using the dictionary of '{}' ({} bytes)", with_dict->path(), create.dictionary.size());
      } else {
        ZREC_ASSIGN_OR_RETURN(TrainOptions to, make_train_options(a.train, g, a.level));
        auto source = store_record_source(sources);
        TrainReport report;
        const std::string what = a.sources.size() == 1 ? "'" + a.sources[0] + "'" : "the sources";
        ZREC_ASSIGN_OR_RETURN(create.dictionary, train_with_report(command, *source, to, what, g, &report));
        if (g.verbosity >= 0)
          std::fprintf(stderr, "zrec %s: trained a dictionary: %s\n", command.c_str(),
                       printable(describe_training(report, create.dictionary.size(), to.seed, seconds_since(started)))
                           .c_str());
      }
    }
  } else if (!a.train.tier.empty()) {
    return usage_error(std::string("--tier is only used with --codec zstd_dict, not ") + to_string(create.codec));
  }

  uint64_t total_records = 0;
  for (Store* s : sources) total_records += s->length();
  ProgressMeter meter(g, command);
  meter.set_total_records(total_records);
  TransferOptions options;
  options.window_bytes = a.window_mib << 20;
  options.frame_copy = a.level == 0 && (!create.checksum || sources_checksummed);
  options.cancel = interrupt_flag();
  options.progress = [&](const TransferStats& st) { meter.update(st.records, st.logical_bytes); };
  WriterOptions writer;
  writer.threads = g.threads;
  writer.level = a.level;
  TransferStats stats;
  const auto copy_started = std::chrono::steady_clock::now();
  Status s = build_from_stores(sources, a.dst, create, writer, options, &stats);
  meter.finish();
  if (s.code() == StatusCode::kCancelled) return cancelled("interrupted; '" + a.dst + "' was not created");
  ZREC_RETURN_IF_ERROR(s);

  if (g.verbosity >= 0) {
    uint64_t stored = 0;
    {
      auto dst = Store::open(a.dst, {.threads = 1});
      if (dst.is_ok())
        for (uint32_t sh = 0; sh < dst.value()->data_shards(); ++sh) stored += dst.value()->tail(sh);
    }
    const double secs = seconds_since(copy_started);
    std::fprintf(stderr,
                 "zrec %s: wrote '%s' (%s, %u shards): %llu records, %s logical, %s stored (%s; sources %s, %s); "
                 "%llu frames copied, %llu records re-encoded; %.2f s, %.1f MiB/s of source\n",
                 command.c_str(), printable(a.dst).c_str(), to_string(create.codec), create.data_shards,
                 static_cast<unsigned long long>(stats.records), mib(stats.logical_bytes).c_str(), mib(stored).c_str(),
                 format_ratio(stats.logical_bytes, stored).c_str(), mib(stats.source_stored_bytes).c_str(),
                 format_ratio(stats.logical_bytes, stats.source_stored_bytes).c_str(),
                 static_cast<unsigned long long>(stats.frames_copied),
                 static_cast<unsigned long long>(stats.records_recoded), secs,
                 secs > 0 ? stats.source_stored_bytes / 1048576.0 / secs : 0.0);
  }
  return Status::ok();
}

}  // namespace zrec::cli
