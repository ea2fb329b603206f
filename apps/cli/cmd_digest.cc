// zrec digest: a hash of a store's logical records, independent of codec, dictionary,
// level, shard count and physical order (include/zrec/digest.h has the definition).
#include <spdlog/spdlog.h>

#include "zrec/digest.h"
#include "zrec/store.h"

#include "cli/commands.h"
#include "cli/formats/printable.h"
#include "cli/interrupt.h"
#include "cli/output_guard.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "cli/report/json.h"
#include "cli/report/progress.h"
#include "cli/usage.h"

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

Status run_digest(const DigestArgs& a, const GlobalOptions& g) {
  if (a.per_record && a.stores.size() != 1) throw UsageError("--per-record takes exactly one store");
  if (a.per_record && a.json && a.output == "-")
    throw UsageError("--json prints its object on stdout: give -o FILE for the --per-record lines");
  // With --json the object carries the digests; the text lines go only to an -o FILE.
  const bool text_lines = !a.json || a.output != "-";
  CommandReport report("digest", g, a.json);
  JsonWriter digests;  // the "stores" array
  digests.begin_array();
  InterruptScope interrupt_scope;
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.output, "-o", a.stores));
  ZREC_RETURN_IF_ERROR(refuse_existing_output(a.output, "-o", a.force));
  // Every store is opened (and, with --wait, its lock awaited) before -o is created, so
  // an error or an interruption there leaves no output file behind.
  std::vector<std::unique_ptr<Store>> stores;
  for (const auto& path : a.stores) {
    ZREC_ASSIGN_OR_RETURN(auto store, Store::open(path, {.lanes = g.lanes(Work::kRead), .wait = g.lock_wait()}));
    stores.push_back(std::move(store));
  }
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open(a.output, "-o", a.force));
  for (size_t i = 0; i < a.stores.size(); ++i) {
    const std::string& path = a.stores[i];
    const std::unique_ptr<Store> store = std::move(stores[i]);
    ProgressMeter meter(g, "digest");
    meter.set_total_records(store->length());
    DigestOptions options;
    options.window_bytes = a.window_mib << 20;
    uint64_t done = 0;
    std::string line;
    options.per_record = [&](uint64_t id, const RecordHash& hash) -> Status {
      if (interrupted()) return cancelled("interrupted");
      if ((++done & 1023) == 0) meter.update(done, 0);
      if (!a.per_record) return Status::ok();
      // "ID<TAB>hash": lines of a sampled or filtered listing still say which record.
      line = std::to_string(id);
      line += '\t';
      line += hash_to_hex(hash);
      line += '\n';
      return out.write(line);
    };
    ZREC_ASSIGN_OR_RETURN(RecordHash digest, digest_store(*store, options));
    meter.finish();
    // The path as every message shows it: a newline in it must not forge a second line.
    if (!a.per_record && text_lines)
      ZREC_RETURN_IF_ERROR(out.write(hash_to_hex(digest) + "  " + printable(path) + "\n"));
    digests.begin_object().key("path").value(path).key("length").value(store->length());
    digests.key("digest").value(hash_to_hex(digest)).end_object();
    spdlog::info("'{}': {} records, digest {}", path, store->length(), hash_to_hex(digest));
  }
  ZREC_RETURN_IF_ERROR(out.flush());
  digests.end_array();
  report.set_json("stores", digests.str());
  return report.finish("");  // the digests are the output (stdout or -o)
}

}  // namespace

Command register_digest(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<DigestArgs>();
  CLI::App* cmd = root.add_subcommand("digest", "Hash a store's records, independent of codec and layout");
  cmd->add_option("stores", args->stores, "Stores to hash")->required();
  cmd->add_flag("--per-record", args->per_record,
                "Write one line per record, in ID order: its ID, a tab, and the SHA-256 of its logical bytes in hex");
  cmd->add_option("-o,--output", args->output, "Output file (- for stdout); an existing file needs -f")
      ->capture_default_str();
  cmd->add_flag("-f,--force", args->force, "Overwrite an existing -o file");
  cmd->add_flag("--json", args->json,
                "Print one JSON object on stdout holding the digests (text lines then go only to -o FILE; "
                "keys: man zrec-digest, JSON OUTPUT)");
  cmd->add_option("--window-mib", args->window_mib, "Memory budget of one read window, MiB")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->footer(
      "Prints '<sha256 hex>  <store>' per store: a SHA-256 over the dtype, geometry, record\n"
      "count and each record's SHA-256, in order (man zrec-digest has the exact definition).\n"
      "Two stores with equal digests hold the same records: codec, dictionary, level, shard\n"
      "count and physical layout do not enter it.\n\n"
      "Examples:\n"
      "  zrec digest tokens/\n"
      "  [ \"$(zrec digest a/ | cut -d' ' -f1)\" = \"$(zrec digest b/ | cut -d' ' -f1)\" ] && echo same\n"
      "  zrec digest --per-record tokens/ > tokens.sums");
  return Command{cmd, [args, &global]() { return run_digest(*args, global); }, nullptr,
                 [args] { return args->output == "-"; }};
}

}  // namespace zrec::cli
