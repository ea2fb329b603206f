// zrec digest: a hash of a store's logical records, independent of codec, dictionary,
// level, shard count and physical order (include/zrec/digest.h has the definition).
#include <sys/stat.h>

#include <cstdio>
#include <functional>
#include <map>
#include <optional>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/digest.h"
#include "zrec/remote.h"
#include "zrec/store.h"

#include "cli/app/app.h"
#include "cli/app/command.h"
#include "cli/formats/printable.h"
#include "cli/formats/selection.h"
#include "cli/options/json_option.h"
#include "cli/options/output_option.h"
#include "cli/options/usage_error.h"
#include "cli/options/window_option.h"
#include "cli/os/interrupt.h"
#include "cli/os/output_guard.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "cli/report/json.h"
#include "cli/report/progress.h"
#include "cli/roots/root_digest.h"

namespace zrec::cli {

namespace {

struct DigestArgs {
  std::vector<std::string> stores;
  bool per_record = false;
  bool json = false;
  std::string output = "-";
  bool force = false;  // -f/--force: overwrite an existing -o file
  uint64_t window_mib = kDefaultWindowBytes >> 20;
};

// `digest STORE... SELECTION`: the last operand is a selection when it is no path and
// reads as one (0:1000, ::10, -5:): then it is taken off the stores. One that is no path
// and holds only a selection's characters (digits, ':', ',', '-') but does not parse
// (::0, 5:2:0) is a bad selection, refused before anything is hashed: taken for a store,
// it printed the other stores' whole digests before failing.
std::optional<std::string> selection_operand(std::vector<std::string>& operands) {
  if (operands.size() < 2) return std::nullopt;
  struct stat st {};
  const std::string& last = operands.back();
  if (::stat(last.c_str(), &st) == 0) return std::nullopt;
  if (auto parsed = parse_selection(last); !parsed.is_ok()) {
    const bool selection_like = !last.empty() && last.find_first_not_of("0123456789:,-") == std::string::npos &&
                                last.find_first_of(":,") != std::string::npos;
    if (selection_like) throw UsageError(parsed.status().message());
    return std::nullopt;
  }
  std::string text = last;
  operands.pop_back();
  return text;
}

// Where digest_root writes: the text lines, and the "stores" array of --json.
struct RootDigestOutput {
  const DigestArgs& args;
  const std::optional<std::string>& selection_text;
  const std::optional<std::vector<SelectionItem>>& items;
  Output& out;
  bool text_lines;
  JsonWriter& json;
};

// `digest ROOT`: a line per committed stream ("HASH  ROOT/STREAM"), then the dataset's
// ("HASH  ROOT"); with --per-record, "ID<TAB>HASH" per sample instead; with a SELECTION,
// those samples of every stream. --json: an object with "root": true and "streams".
Status digest_root(OpenedRoot& root, RootDigestOutput& o) {
  SampleSelection selection;
  std::vector<IdRun> runs;
  const std::vector<uint64_t> no_list;
  std::optional<SelectionIndex> selected;
  const std::string shown_root = redact_url(root.path);
  if (o.items) {
    auto resolved = resolve_runs(*o.items, root.state.length);
    if (!resolved.is_ok()) return resolved.status().with_context("'" + shown_root + "'");
    runs = std::move(resolved).value();
    selected.emplace(runs, no_list);
    selection.count = selected->total();
    selection.id_at = [&selected](uint64_t p) { return selected->at(p); };
  }
  const uint64_t window = o.args.window_mib << 20;
  if (o.args.per_record) {
    std::string line;
    ZREC_RETURN_IF_ERROR(digest_root_samples(root, selection, window, [&](uint64_t id, const RecordHash& hash) {
      line = std::to_string(id) + "\t" + hash_to_hex(hash) + "\n";
      return o.out.write(line);
    }));
    // The per-sample lines went to -o; the streams' and the dataset's digests would take
    // a second read, and are not computed here.
    o.json.begin_object().key("path").value(shown_root).key("root").value(true);
    if (o.selection_text) o.json.key("selection").value(*o.selection_text);
    o.json.key("length").value(selected ? selected->total() : root.state.length).end_object();
    return Status::ok();
  }
  ZREC_ASSIGN_OR_RETURN(std::vector<NamedHash> streams, digest_root_streams(root, selection, window));
  const uint64_t count = selected ? selected->total() : root.state.length;
  const RecordHash dataset = digest_dataset(count, streams);
  const std::string suffix = o.selection_text ? "[" + *o.selection_text + "]" : "";
  o.json.begin_object().key("path").value(shown_root).key("root").value(true);
  if (o.selection_text) o.json.key("selection").value(*o.selection_text);
  o.json.key("length").value(count).key("streams").begin_array();
  for (const NamedHash& s : streams) {
    const std::string shown = redact_url(join_path(root.path, s.name));
    if (o.text_lines) ZREC_RETURN_IF_ERROR(o.out.write(hash_to_hex(s.hash) + "  " + printable(shown + suffix) + "\n"));
    o.json.begin_object().key("name").value(s.name).key("path").value(shown).key("digest").value(hash_to_hex(s.hash));
    o.json.end_object();
  }
  o.json.end_array().key("digest").value(hash_to_hex(dataset)).end_object();
  if (o.text_lines)
    ZREC_RETURN_IF_ERROR(o.out.write(hash_to_hex(dataset) + "  " + printable(shown_root + suffix) + "\n"));
  spdlog::info("root '{}': {} streams, {} samples, digest {}", shown_root + suffix, streams.size(), count,
               hash_to_hex(dataset));
  return Status::ok();
}

// One store's digest (of its selection, when one is given): its line or --per-record
// lines, and its object in the "stores" array. A store that cannot be read goes to
// `failed`, which says whether the command stops.
Status digest_one_store(const std::string& path, Store& store, const GlobalOptions& g, RootDigestOutput& o,
                        const std::function<Status(Status)>& failed) {
  DigestOptions options;
  options.window_bytes = o.args.window_mib << 20;
  std::vector<IdRun> runs;
  const std::vector<uint64_t> no_list;
  std::optional<SelectionIndex> selected;
  if (o.items) {
    auto resolved = resolve_runs(*o.items, store.length());
    if (!resolved.is_ok()) {
      ZREC_RETURN_IF_ERROR(failed(resolved.status().with_context("'" + path + "'")));
      return Status::ok();
    }
    runs = std::move(resolved).value();
    selected.emplace(runs, no_list);
    options.count = selected->total();
    options.id_at = [&selected](uint64_t p) { return selected->at(p); };
  }
  const uint64_t count = selected ? selected->total() : store.length();
  ProgressMeter meter(g, "digest");
  meter.set_total_records(count);
  Context ctx = g.read_context(path);
  ctx.control.progress = [&meter](const Progress& p) { meter.update(p.records, p.bytes); };
  std::string line;
  if (o.args.per_record)
    options.per_record = [&](uint64_t id, const RecordHash& hash) -> Status {
      // "ID<TAB>hash": lines of a sampled or filtered listing still say which record.
      line = std::to_string(id);
      line += '\t';
      line += hash_to_hex(hash);
      line += '\n';
      return o.out.write(line);
    };
  auto digest = digest_store(store, options, ctx);
  meter.finish();
  if (!digest.is_ok()) {
    ZREC_RETURN_IF_ERROR(failed(digest.status()));
    return Status::ok();
  }
  // The path as every message shows it: a newline in it must not forge a second line.
  // A selection follows it as NumPy would index it: "tokens/[0:1000]".
  // A URL's credentials and query string never show (zrec/remote.h).
  const std::string shown = redact_url(path) + (o.selection_text ? "[" + *o.selection_text + "]" : "");
  if (!o.args.per_record && o.text_lines)
    ZREC_RETURN_IF_ERROR(o.out.write(hash_to_hex(*digest) + "  " + printable(shown) + "\n"));
  o.json.begin_object().key("path").value(redact_url(path));
  if (o.selection_text) o.json.key("selection").value(*o.selection_text);
  o.json.key("length").value(count).key("digest").value(hash_to_hex(*digest)).end_object();
  spdlog::info("'{}': {} records, digest {}", shown, count, hash_to_hex(*digest));
  return Status::ok();
}

Status run_digest(const DigestArgs& a, const GlobalOptions& g) {
  std::vector<std::string> paths = a.stores;
  const std::optional<std::string> selection_text = selection_operand(paths);
  if (a.per_record && paths.size() != 1) throw UsageError("--per-record takes exactly one store or root");
  if (a.per_record && a.json && a.output == "-")
    throw UsageError("--json prints its object on stdout: give -o FILE for the --per-record lines");
  // With --json the object carries the digests; the text lines go only to an -o FILE.
  const bool text_lines = !a.json || a.output != "-";
  CommandReport report("digest", g, a.json);
  JsonWriter digests;  // the "stores" array
  digests.begin_array();
  InterruptScope interrupt_scope;
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.output, "-o", paths));
  ZREC_RETURN_IF_ERROR(refuse_existing_output(a.output, "-o", a.force));
  // Each store is judged on its own: one that cannot be opened or read is reported and
  // the others are still hashed; the exit status is the worst (many_paths.h).
  Status worst;
  const auto failed = [&](Status s) {
    if (s.code() == StatusCode::kCancelled) return s;
    if (worst.is_ok() || exit_code_for(s) >= exit_code_for(worst)) std::swap(worst, s);
    if (!s.is_ok()) std::fprintf(stderr, "zrec digest: %s\n", printable(s.message()).c_str());
    return Status::ok();
  };
  // Every store is opened (and, with --wait, its lock awaited) before -o is created, so
  // an error or an interruption there leaves no output file behind. While a writer
  // appends, a store is read as last published (the records it holds are final).
  std::vector<std::unique_ptr<Store>> stores;
  std::vector<std::string> opened;
  std::map<size_t, OpenedRoot> roots;  // by position in `opened`: a root, hashed stream by stream
  for (const auto& path : paths) {
    if (is_root(path, g)) {
      auto root = open_root(path, g);
      if (!root.is_ok()) {
        ZREC_RETURN_IF_ERROR(failed(root.status()));
        continue;
      }
      roots.emplace(opened.size(), std::move(root).value());
      stores.emplace_back();
      opened.push_back(path);
      continue;
    }
    Context ctx = g.read_context(path);
    ctx.snapshot_if_busy = !g.wait;
    auto store = Store::open(path, {}, ctx);
    if (!store.is_ok()) {
      ZREC_RETURN_IF_ERROR(failed(store.status()));
      continue;
    }
    stores.push_back(std::move(store).value());
    opened.push_back(path);
  }
  std::optional<std::vector<SelectionItem>> items;
  if (selection_text) {
    auto parsed = parse_selection(*selection_text);
    if (!parsed.is_ok()) throw UsageError(parsed.status().message());
    items = std::move(parsed).value();
  }
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open(a.output, "-o", a.force));
  RootDigestOutput root_out{a, selection_text, items, out, text_lines, digests};
  for (size_t i = 0; i < opened.size(); ++i) {
    const std::string& path = opened[i];
    if (auto root = roots.find(i); root != roots.end()) {
      ZREC_RETURN_IF_ERROR(failed(digest_root(root->second, root_out)));
      continue;
    }
    const std::unique_ptr<Store> store = std::move(stores[i]);  // closed once hashed
    ZREC_RETURN_IF_ERROR(digest_one_store(path, *store, g, root_out, failed));
  }
  ZREC_RETURN_IF_ERROR(out.flush());
  digests.end_array();
  report.set_json("stores", digests.str());
  ZREC_RETURN_IF_ERROR(report.finish(""));  // the digests are the output (stdout or -o)
  return worst;
}

}  // namespace

Command register_digest(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<DigestArgs>();
  CLI::App* cmd = root.add_subcommand("digest", "Hash a store's records, independent of codec and layout");
  cmd->add_option("stores", args->stores,
                  "Stores to hash, each on its own (the exit status is the worst); a root of named streams: each "
                  "committed stream over its committed samples, then the dataset (man zrec-digest, ROOTS); a last "
                  "operand that is a SELECTION (0:1000, ::10) hashes those records of each store")
      ->required();
  cmd->add_flag("--per-record", args->per_record,
                "Write one line per record, in ID order: its ID, a tab, and the SHA-256 of its logical bytes in hex "
                "(a root: per sample, over its streams' record hashes)");
  add_output_options(cmd, args->output, args->force, "Output file", "");
  add_json_flag(cmd, args->json, "holding the digests", "text lines then go only to -o FILE");
  add_window_mib_option(cmd, args->window_mib, "read window");
  return Command{cmd, [args, &global]() { return run_digest(*args, global); }, nullptr,
                 [args] { return args->output == "-"; }};
}

}  // namespace zrec::cli
