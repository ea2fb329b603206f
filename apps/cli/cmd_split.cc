// zrec split: stable train/val/test splits by a hash of each sample's key
// (cli/formats/key_split.h), written as ID files that `cat --indices-from` reads.
#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include <CLI/CLI.hpp>

#include "zrec/dataset.h"
#include "zrec/remote.h"
#include "zrec/store.h"

#include "cli/app/command.h"
#include "cli/formats/key_split.h"
#include "cli/options/json_option.h"
#include "cli/options/output_option.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/os/output_guard.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"

namespace zrec::cli {

namespace {

struct SplitArgs {
  std::string path;
  std::string spec;  // --by-key-hash
  std::string salt;
  std::string output;  // -o PATTERN with {name}
  bool force = false;
  bool json = false;
};

constexpr uint64_t kSplitKeyChunk = 65536;  // keys read per step

// Where a sample's key comes from: the root's __key__ stream, or none (its ID).
struct KeySource {
  uint64_t length = 0;
  std::unique_ptr<Store> keys;  // null: the ID's decimal text is the key
  Control control;              // what stops the reading (SIGINT/SIGTERM)
};

Result<KeySource> open_keys(const std::string& path, const GlobalOptions& g) {
  Context ctx = g.read_context(path);
  ctx.snapshot_if_busy = !g.wait;
  KeySource src;
  src.control = ctx.control;
  ZREC_ASSIGN_OR_RETURN(const Dataset ds, Dataset::open(path, {}, ctx));
  if (!ds.marked()) {
    if (!is_store_dir(path, ctx))
      return not_found("'" + redact_url(path) + "' is neither a store (no meta.zr) nor a root (no zrec-root marker)");
    ZREC_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::open(path, {}, ctx));
    src.length = store->length();
    return src;
  }
  src.length = ds.length();
  if (std::find(ds.streams().begin(), ds.streams().end(), kKeyStream) == ds.streams().end()) return src;
  ZREC_ASSIGN_OR_RETURN(src.keys, ds.open_stream(kKeyStream));
  if (src.keys->length() < src.length)
    return malformed("root '" + redact_url(path) + "': its __key__ stream holds fewer records than the " +
                     std::to_string(src.length) + " samples its marker commits");
  return src;
}

// Calls fn(id, key) for every sample in ID order.
Status for_each_key(const KeySource& src, const std::function<Status(uint64_t, std::string_view)>& fn) {
  const Control& control = src.control;
  if (!src.keys) {
    for (uint64_t id = 0; id < src.length; ++id) {
      if ((id & 0xffff) == 0) ZREC_RETURN_IF_ERROR(control.check());
      ZREC_RETURN_IF_ERROR(fn(id, std::to_string(id)));
    }
    return Status::ok();
  }
  const uint64_t prefix = src.keys->schema().shape_prefix_bytes();
  std::vector<uint64_t> ids;
  for (uint64_t first = 0; first < src.length; first += kSplitKeyChunk) {
    ids.resize(std::min(kSplitKeyChunk, src.length - first));
    std::iota(ids.begin(), ids.end(), first);
    ZREC_RETURN_IF_ERROR(src.keys->scan(ids, kDefaultWindowBytes >> 2, [&](const Window& w) -> Status {
      ZREC_RETURN_IF_ERROR(control.check());
      for (size_t k = 0; k < w.ids.size(); ++k) {
        const uint64_t begin = std::min(w.offsets[k] + prefix, w.offsets[k + 1]);
        ZREC_RETURN_IF_ERROR(
            fn(w.ids[k], std::string_view(reinterpret_cast<const char*>(w.data) + begin, w.offsets[k + 1] - begin)));
      }
      return Status::ok();
    }));
  }
  return Status::ok();
}

std::string file_of(const std::string& pattern, const std::string& name) {
  std::string out = pattern;
  for (size_t at; (at = out.find("{name}")) != std::string::npos;) out.replace(at, 6, name);
  return out;
}

Status run_split(const SplitArgs& a, const GlobalOptions& g) {
  auto parsed = parse_split_spec(a.spec);
  if (!parsed.is_ok()) throw UsageError("--by-key-hash: " + parsed.status().message());
  const std::vector<SplitPart> parts = std::move(parsed).value();
  if (a.output.find("{name}") == std::string::npos)
    throw UsageError("-o '" + a.output + "' needs {name}, which each split's name replaces (-o 'ids-{name}.txt')");
  InterruptScope interrupt_scope;
  CommandReport report("split", g, a.json);
  ZREC_ASSIGN_OR_RETURN(KeySource src, open_keys(a.path, g));
  std::vector<Output> outs;
  for (const SplitPart& p : parts) {
    const std::string file = file_of(a.output, p.name);
    ZREC_RETURN_IF_ERROR(refuse_output_into_stores(file, "-o", {a.path}));
    ZREC_RETURN_IF_ERROR(refuse_existing_output(file, "-o", a.force));
  }
  for (const SplitPart& p : parts) {
    ZREC_ASSIGN_OR_RETURN(Output out, Output::open(file_of(a.output, p.name), "-o", a.force));
    outs.push_back(std::move(out));
  }
  std::vector<uint64_t> counts(parts.size(), 0);
  std::string line;
  ZREC_RETURN_IF_ERROR(for_each_key(src, [&](uint64_t id, std::string_view key) {
    const size_t part = split_of(parts, key_point(a.salt, key));
    ++counts[part];
    line = std::to_string(id);
    line += '\n';
    return outs[part].write(line);
  }));
  for (Output& out : outs) ZREC_RETURN_IF_ERROR(out.flush());
  JsonFacts splits;
  std::string summary;
  for (size_t i = 0; i < parts.size(); ++i) {
    JsonFacts one;
    one.set("output", file_of(a.output, parts[i].name)).set("length", counts[i]);
    splits.set_json(parts[i].name, one.object());
    summary += (i ? ", " : "") + parts[i].name + " " + std::to_string(counts[i]);
  }
  report.set("path", redact_url(a.path)).set("length", src.length).set("key", src.keys ? kKeyStream : "id");
  report.set_json("splits", splits.object());
  return report.finish("split " + std::to_string(src.length) + " samples by " +
                       (src.keys ? std::string("their keys") : std::string("their IDs")) + ": " + summary);
}

}  // namespace

Command register_split(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<SplitArgs>();
  CLI::App* cmd = root.add_subcommand("split", "Split a root's samples into stable ID lists by a hash of their keys");
  cmd->add_option("path", args->path, "The root (its __key__ stream gives the keys) or store (keys: the IDs)")
      ->required();
  cmd->add_option("--by-key-hash", args->spec,
                  "The splits in order, each NAME=SHARE (5%, 0.05) or NAME=rest: val=5%,test=5%,train=rest")
      ->required();
  cmd->add_option("--salt", args->salt, "Text hashed before each key: another salt, another split");
  cmd->add_option("-o,--output", args->output, "Output files, {name} replaced by each split's name")
      ->required()
      ->type_name("PATTERN");
  cmd->add_flag("-f,--force", args->force, "Replace existing output files");
  add_json_flag(cmd, args->json);
  return Command{cmd, [args, &global]() { return run_split(*args, global); }};
}

}  // namespace zrec::cli
