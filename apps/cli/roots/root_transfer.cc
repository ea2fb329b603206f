#include "cli/roots/root_transfer.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "zrec/codec_choice.h"
#include "zrec/dataset.h"
#include "zrec/dict.h"
#include "zrec/remote.h"
#include "zrec/transfer.h"

#include "cli/formats/path_name.h"
#include "cli/formats/printable.h"
#include "cli/options/codec_rules.h"
#include "cli/options/option_values.h"
#include "cli/options/stream_codec_option.h"
#include "cli/options/usage_error.h"
#include "cli/os/id_list_file.h"
#include "cli/os/interrupt.h"
#include "cli/os/output_guard.h"
#include "cli/report/byte_size.h"
#include "cli/report/codec_choice_report.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "cli/report/json.h"
#include "cli/report/progress.h"
#include "cli/roots/root_reader.h"

namespace zrec::cli {

void add_stream_codec_option(CLI::App* cmd, std::vector<std::string>& specs) {
  cmd->add_option("--stream-codec", specs,
                  "Roots: STREAM=CODEC, the stream STREAM of DST gets codec raw, zstd or auto (one per stream), "
                  "whatever --codec says for the others (default: each stream's own codec)");
}

bool any_root(const std::vector<std::string>& sources, const GlobalOptions& g) {
  return std::ranges::any_of(sources, [&](const std::string& s) { return is_root(s, g); });
}

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

// The options that need one store (a dictionary trained for it, a join in steps, sources
// removed) are not taken with roots yet: usage errors before anything is read.
void check_root_options(const RootTransferArgs& a) {
  if (a.store_only || a.codec == "zstd_dict")
    throw UsageError(
        "a root's streams keep their own dictionaries: --codec zstd_dict, --dict and --tier are for one store "
        "(recompress ROOT/STREAM), and --consume for stores");
}

// Every source a root, with the first one's streams: otherwise what differs.
Status check_same_streams(const std::vector<OpenedRoot>& roots) {
  const OpenedRoot& first = roots.front();
  for (const OpenedRoot& r : roots) {
    if (r.state.streams == first.state.streams) continue;
    std::vector<std::string> only_first, only_this;
    std::ranges::set_difference(first.state.streams, r.state.streams, std::back_inserter(only_first));
    std::ranges::set_difference(r.state.streams, first.state.streams, std::back_inserter(only_this));
    std::string why;
    if (!only_first.empty()) why += "only '" + redact_url(first.path) + "' has " + joined(only_first);
    if (!only_this.empty())
      why += std::string(why.empty() ? "" : "; ") + "only '" + redact_url(r.path) + "' has " + joined(only_this);
    return invalid_argument("root '" + redact_url(r.path) + "' has the streams (" + joined(r.state.streams) +
                            ") and root '" + redact_url(first.path) + "' (" + joined(first.state.streams) +
                            "): " + why + "; concat joins roots of the same streams");
  }
  return Status::ok();
}

// One stream of DST: the first root's store decides schema, codec (unless --codec or
// --stream-codec), shards and dictionary; every root's committed samples are its parts.
// A stream whose codec is auto has it chosen from those parts' records, into *choice.
Result<RootStreamPlan> plan_stream(size_t k, std::vector<OpenedRoot>& roots, const RootTransferArgs& a,
                                   const StreamCodecs& codecs, const GlobalOptions& g,
                                   std::optional<CodecChoice>* choice) {
  RootStreamPlan plan;
  Store& first = *roots.front().streams[k].store;
  plan.name = roots.front().streams[k].name;
  for (OpenedRoot& r : roots) {
    Store& s = *r.streams[k].store;
    if (const std::string diff = schema_difference(first.schema(), s.schema()); !diff.empty())
      return invalid_argument("stream '" + plan.name + "' of root '" + redact_url(r.path) + "' differs from '" +
                              redact_url(roots.front().path) + "': " + diff);
    plan.parts.push_back({&s, r.state.length});
  }
  CreateOptions& c = plan.create;
  c.schema = first.schema();
  const auto given = codecs.codecs.find(plan.name);
  const NewCodec asked = given != codecs.codecs.end() ? given->second
                         : a.codec.empty()            ? NewCodec{first.codec(), false}
                                                      : parse_new_codec(a.codec);
  c.codec = asked.codec;
  if (asked.automatic || c.codec != Codec::kRaw)
    check_codec_options({.codec = c.codec, .automatic = asked.automatic, .level = a.level, .checksum = a.checksum});
  c.data_shards = a.shards != 0 ? a.shards : first.data_shards();
  if (c.codec == Codec::kZstdDict) c.dictionary = first.dictionary();
  if (asked.automatic) {
    std::vector<Store*> stores;
    for (const StreamPart& part : plan.parts) stores.push_back(part.store);
    auto source = store_record_source(stores);
    ZREC_ASSIGN_OR_RETURN(*choice, choose_codec(*source, g.context(Work::kWrite)));
    c.codec = (*choice)->codec;
    c.dictionary = (*choice)->dictionary;
  }
  c.checksum = c.codec != Codec::kRaw && (a.checksum || first.checksum());
  return plan;
}

}  // namespace

Status run_root_transfer(const std::string& command, const RootTransferArgs& a, const GlobalOptions& g) {
  check_root_options(a);
  const StreamCodecs codecs = parse_stream_codecs(a.stream_codecs, [](const std::string&) -> std::string {
    return "a stream of a root is given raw or zstd here (a zstd_dict stream keeps its dictionary when no "
           "--stream-codec names it)";
  });
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.dst, "DST", a.sources));
  ZREC_RETURN_IF_ERROR(refuse_existing_destination(a.dst));
  InterruptScope interrupt_scope;
  CommandReport report(command, g, a.json);
  std::vector<OpenedRoot> roots;
  for (const auto& path : a.sources) {
    if (!is_root(path, g))
      return invalid_argument("'" + redact_url(path) + "' is no root (no " + kRootMarkerFile + " marker), and '" +
                              redact_url(a.sources.front() == path ? a.sources.back() : a.sources.front()) +
                              "' is one: " + command + " takes stores or roots, not both");
    ZREC_ASSIGN_OR_RETURN(OpenedRoot r, open_root(path, g));
    roots.push_back(std::move(r));
  }
  ZREC_RETURN_IF_ERROR(check_same_streams(roots));
  check_stream_codecs_name(codecs, roots.front().state.streams);
  std::vector<RootStreamPlan> plans;
  std::vector<std::optional<CodecChoice>> choices(roots.front().streams.size());
  uint64_t samples = 0;
  for (const OpenedRoot& r : roots) samples += r.state.length;
  for (size_t k = 0; k < roots.front().streams.size(); ++k) {
    ZREC_ASSIGN_OR_RETURN(RootStreamPlan plan, plan_stream(k, roots, a, codecs, g, &choices[k]));
    plans.push_back(std::move(plan));
  }
  TransferOptions options;
  if (!a.exclude_from.empty()) {
    ZREC_ASSIGN_OR_RETURN(options.skip_ids, read_id_list(a.exclude_from, "--exclude-from", samples));
    samples -= options.skip_ids.size();
  }
  ProgressMeter meter(g, command);
  meter.set_total_records(samples * plans.size());
  options.window_bytes = a.window_mib << 20;
  options.frame_copy = a.level == 0 && !a.checksum;
  Context ctx = g.context(Work::kWrite);
  ctx.control.progress = [&](const Progress& p) { meter.update(p.records, p.bytes); };
  WriterOptions writer;
  writer.level = a.level;
  TransferStats stats;
  // The first source's card (zrec card) goes with the data; the streams keep their names.
  ZREC_ASSIGN_OR_RETURN(const std::optional<std::string> card,
                        read_card(a.sources.front(), g.read_context(a.sources.front())));
  const Status built = build_root(a.dst, plans, writer, options, &stats, card, ctx);
  meter.finish();
  ZREC_RETURN_IF_ERROR(built);
  std::vector<std::string> names;
  std::vector<const CodecChoice*> chosen;
  for (size_t k = 0; k < plans.size(); ++k) {
    names.push_back(plans[k].name);
    chosen.push_back(choices[k] ? &*choices[k] : nullptr);
  }
  report_stream_choices(report, a.dst, names, chosen);
  std::string codec_list;
  JsonWriter streams;
  streams.begin_array();
  for (const RootStreamPlan& p : plans) {
    codec_list += (codec_list.empty() ? "" : ", ") + p.name + " " + to_string(p.create.codec);
    streams.begin_object().key("name").value(p.name).key("codec").value(to_string(p.create.codec)).end_object();
  }
  streams.end_array();
  std::vector<std::string> shown;
  for (const auto& s : a.sources) shown.push_back(redact_url(s));
  report.set("path", a.dst).set("sources", shown).set("root", true).set("length", samples);
  report.set_json("streams", streams.str());
  report.set("logical_bytes", stats.logical_bytes).set("stored_bytes", stats.stored_bytes);
  report.set("source_payload_bytes", stats.source_stored_bytes).set("frames_copied", stats.frames_copied);
  report.set("records_reencoded", stats.records_recoded);
  return report.finish(fmt::format(
      "wrote root '{}': {} samples of {} stream{} ({}); {} logical, {} stored; {} frames "
      "copied, {} records re-encoded",
      printable(a.dst), samples, plans.size(), plans.size() == 1 ? "" : "s", printable(codec_list),
      format_mib(stats.logical_bytes), format_mib(stats.stored_bytes), stats.frames_copied, stats.records_recoded));
}

}  // namespace zrec::cli
