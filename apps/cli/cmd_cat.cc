// zrec cat: write selected records to stdout or a file as .npy, raw bytes, text or JSON lines.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

#include "zrec/store.h"

#include "cli/app/command.h"
#include "cli/formats/bytes_text.h"
#include "cli/formats/file_signature.h"
#include "cli/formats/json_string.h"
#include "cli/formats/npy.h"
#include "cli/formats/record_format.h"
#include "cli/formats/record_order.h"
#include "cli/formats/selection.h"
#include "cli/npz_writer.h"
#include "cli/options/option_choices.h"
#include "cli/options/option_values.h"
#include "cli/options/output_option.h"
#include "cli/options/usage_error.h"
#include "cli/options/window_option.h"
#include "cli/os/id_list_file.h"
#include "cli/os/interrupt.h"
#include "cli/os/output_guard.h"
#include "cli/os/side_file.h"
#include "cli/report/byte_size.h"
#include "cli/report/console.h"
#include "cli/report/progress.h"
#include "cli/roots/card_file.h"
#include "cli/roots/root_cat.h"
#include "cli/tar_export.h"

namespace zrec::cli {

namespace {

struct CatArgs {
  // The store, the selection and the options --format tar takes too, as cat_tar takes
  // them (tar_export.h); its parsed fields (maxsize, seed, arrays_as_text) are filled
  // from the ones below by run_cat_tar.
  CatTarArgs tar{.window_mib = kDefaultWindowBytes >> 20};
  std::string exclude_from;       // --exclude-from: every record but those listed
  std::string format;             // "": npy, or text when writing to a terminal
  std::string framing;            // --framing lines|nul|u32le|u64le: payloads framed as append-stream reads them
  bool bytes_as_numbers = false;  // --bytes-as-numbers: '|u1' records as numbers in text/jsonl
  bool full = false;              // --full: text/jsonl to a terminal print large records whole
  bool distinct = false;          // --distinct: --sample without replacement
  std::optional<uint64_t> seed;   // --seed K (default 0)
  std::string maxsize;            // --format tar: shards of at most BYTES ("1G")
  std::string arrays;             // --format tar: arrays as npy (default) or text members
};

// --exclude-from: the records between the listed IDs, as runs (the list is read whole,
// 8 bytes an ID; what is selected is never expanded).
Result<std::vector<IdRun>> complement_runs(const std::string& path, uint64_t length) {
  ZREC_ASSIGN_OR_RETURN(const std::vector<uint64_t> excluded, read_id_list(path, "--exclude-from", length));
  std::vector<IdRun> runs;
  uint64_t next = 0;  // the first ID not yet covered
  for (uint64_t id : excluded) {
    if (id > next) runs.push_back(IdRun{next, 1, false, id - next});
    next = std::max(next, id + 1);
  }
  if (next < length) runs.push_back(IdRun{next, 1, false, length - next});
  return runs;
}

// The records to write: selected_runs (tar_export.h), or with --exclude-from all but
// the listed ones.
Result<std::vector<IdRun>> cat_runs(const CatArgs& a, uint64_t length, std::vector<uint64_t>& list) {
  if (a.exclude_from.empty()) return selected_runs(a.tar, length, list);
  if (!a.tar.selection.empty() || !a.tar.indices_from.empty())
    throw UsageError("--exclude-from selects every record but those listed: give no SELECTION or --indices-from");
  return complement_runs(a.exclude_from, length);
}

// What is written, in order: --sample, --distinct and --shuffle applied to the
// selection (which must outlive it).
Result<RecordOrder> order_of(const CatArgs& a, const SelectionIndex& selection, const std::string& unit) {
  return RecordOrder::of(selection, {.sample = a.tar.sample,
                                     .distinct = a.distinct,
                                     .shuffle = a.tar.shuffle,
                                     .seed = a.seed.value_or(0),
                                     .unit = unit});
}

// Without --format, records go out as .npy, except to a terminal, where a person reads
// them: there the text format; and -o NAME.npz writes an .npz. A binary --format given
// explicitly still needs a file, a pipe or --force.
std::string format_to_write(const CatArgs& a) {
  if (!a.format.empty()) return a.format;
  if (!a.framing.empty()) return "raw";
  if (a.tar.output.ends_with(".npz")) return "npz";
  return a.tar.output == "-" && stdout_is_terminal() ? "text" : "npy";
}

// --framing: what separates records in the output, as append-stream --framing reads it.
enum class Framing { kNone, kLines, kNul, kU32, kU64 };

Framing framing_to_write(const CatArgs& a) {
  if (a.framing.empty()) return Framing::kNone;
  if (!a.format.empty() && a.format != "raw")
    throw UsageError("--framing writes payload bytes (--format raw), not --format " + a.format);
  // framing_names() in Framing's order, after kNone.
  return static_cast<Framing>(1 + choose(framing_names(), "--framing", a.framing));
}

// One record's payload with its frame: the delimiter after it (lines, nul), or its
// little-endian length before it. A delimiter inside the payload would split the record
// when read back, so it is refused, naming the record and the byte.
Status write_framed(Output& out, Framing framing, uint64_t id, const uint8_t* payload, uint64_t bytes) {
  if (framing == Framing::kLines || framing == Framing::kNul) {
    const char delim = framing == Framing::kLines ? '\n' : '\0';
    if (const void* hit = bytes == 0 ? nullptr : std::memchr(payload, delim, bytes)) {
      const uint64_t at = static_cast<const uint8_t*>(hit) - payload;
      return invalid_argument("record " + std::to_string(id) + " holds a " +
                              (framing == Framing::kLines ? "newline" : "NUL byte") + " at byte " + std::to_string(at) +
                              ": --framing " + (framing == Framing::kLines ? "lines" : "nul") +
                              " cannot delimit it (use --framing u32le or u64le)");
    }
    ZREC_RETURN_IF_ERROR(out.write(payload, bytes));
    return out.write(&delim, 1);
  }
  const size_t width = framing == Framing::kU32 ? 4 : 8;
  if (width == 4 && bytes > UINT32_MAX)
    return invalid_argument("record " + std::to_string(id) + " is " + std::to_string(bytes) +
                            " bytes, more than a u32le length holds (use --framing u64le)");
  uint8_t prefix[8];
  for (size_t i = 0; i < width; ++i) prefix[i] = static_cast<uint8_t>(bytes >> (8 * i));
  ZREC_RETURN_IF_ERROR(out.write(prefix, width));
  return out.write(payload, bytes);
}

enum class Format { kNpy, kRaw, kText, kJsonl, kTar, kNpz };  // cat_format_names()' order

// --format tar: its options checked, then tar_export.h writes it.
Status run_cat_tar(const CatArgs& a, const GlobalOptions& g) {
  if (a.tar.sample && !a.distinct)
    throw UsageError(
        "--sample draws with replacement, and a sample drawn twice would repeat its key in the tar: give --sample N "
        "--distinct (or --shuffle) with --format tar");
  uint64_t maxsize = 0;
  if (!a.maxsize.empty()) {
    auto parsed = parse_byte_size(a.maxsize, "--maxsize");
    if (!parsed.is_ok()) throw UsageError(parsed.status().message());
    maxsize = parsed.value();
    if (maxsize == 0) throw UsageError("--maxsize must be more than 0 bytes");
  }
  if (a.seed && !a.tar.sample && !a.tar.shuffle) throw UsageError("--seed needs --sample or --shuffle");
  if (!a.exclude_from.empty()) throw UsageError("--exclude-from is not used with --format tar (use --indices-from)");
  CatTarArgs tar = a.tar;
  tar.maxsize = maxsize;
  tar.seed = a.seed.value_or(0);
  tar.arrays_as_text = !a.arrays.empty() && choose(tar_array_names(), "--arrays", a.arrays) == 1;
  return cat_tar(tar, g);
}

// The options of the other formats that only some of them take: usage errors.
void check_record_options(const CatArgs& a, Format format) {
  if (!a.tar.keys.empty()) throw UsageError("--keys is used with --format tar only");
  if (a.tar.maxcount > 0 || !a.maxsize.empty())
    throw UsageError("--maxcount and --maxsize write tar shards: --format tar");
  if (a.bytes_as_numbers && format != Format::kText && format != Format::kJsonl)
    throw UsageError("--bytes-as-numbers is used with --format text or jsonl only");
  if (a.tar.absolute_names) throw UsageError("--absolute-names is used with --format tar only");
  if (!a.arrays.empty()) throw UsageError("--arrays is used with --format tar only");
  if (a.full && format != Format::kText && format != Format::kJsonl)
    throw UsageError("--full is used with --format text or jsonl only");
  if (a.tar.sample && a.tar.shuffle)
    throw UsageError("--sample draws in random order already; give --sample or --shuffle");
  if (a.seed && !a.tar.sample && !a.tar.shuffle) throw UsageError("--seed needs --sample or --shuffle");
  if (a.distinct && !a.tar.sample) throw UsageError("--distinct needs --sample N");
  if (a.tar.with_ids && format != Format::kJsonl) throw UsageError("--with-ids needs --format jsonl or tar");
  if (format == Format::kNpz && a.tar.sample && !a.distinct)
    throw UsageError("an .npz names each array by its record ID, and --sample draws with replacement: add --distinct");
}

// `cat ROOT`: JSON lines, one object per sample (root_cat.h), selected by sample as a
// store's records are; the only format for a root besides tar.
Status run_cat_root(const CatArgs& a, const GlobalOptions& g) {
  if (!a.framing.empty() || (!a.format.empty() && a.format != "jsonl") || a.tar.output.ends_with(".npz"))
    throw UsageError(
        "a root of named streams is written as JSON lines (--format jsonl, one object per sample) or "
        "as a tar (--format tar); take one stream for the others (cat ROOT/STREAM)");
  check_record_options(a, Format::kJsonl);
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.tar.output, "-o", {a.tar.path, a.tar.indices_from, a.exclude_from}));
  ZREC_RETURN_IF_ERROR(refuse_existing_output(a.tar.output, "-o", a.tar.force));
  InterruptScope interrupt_scope;
  ZREC_ASSIGN_OR_RETURN(OpenedRoot root, open_root(a.tar.path, g));
  std::vector<uint64_t> list;
  ZREC_ASSIGN_OR_RETURN(auto runs, cat_runs(a, root.state.length, list));
  const SelectionIndex selection(runs, list);
  ZREC_ASSIGN_OR_RETURN(const RecordOrder order, order_of(a, selection, "samples"));
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open(a.tar.output, "-o", a.tar.force));
  RootCatOptions o;
  o.total = order.total();
  o.id_at = [&order](uint64_t i) { return order.id_at(i); };
  o.bytes_as_numbers = a.bytes_as_numbers;
  o.summarise = out.is_terminal() && !a.full;
  o.with_ids = a.tar.with_ids;
  o.window_bytes = a.tar.window_mib << 20;
  ZREC_ASSIGN_OR_RETURN(o.card, read_dataset_card(a.tar.path, g.read_context(a.tar.path)));
  ZREC_RETURN_IF_ERROR(cat_root_jsonl(root, o, out));
  return out.flush();
}

// The checks of a selection that depend on the format: a .npy file holds one array, an
// .npz names each array by its record ID.
Status check_selection_fits(const CatArgs& a, Format format, const Store& store, const RecordOrder& order) {
  const uint64_t total = order.total();
  const auto id_at = [&order](uint64_t i) { return order.id_at(i); };
  const Schema& schema = store.schema();
  // One .npy file holds one array: np.load would read the first of a Ragged stream of them.
  if (a.format.empty() && format == Format::kNpy && a.tar.output.ends_with(".npy") && !schema.is_dense() && total != 1)
    return invalid_argument("-o '" + a.tar.output + "': a selection of " + std::to_string(total) +
                            " records of a Ragged store is " + std::to_string(total) +
                            " arrays, and a .npy file holds one (np.load would read only the first): write -o " +
                            a.tar.output.substr(0, a.tar.output.size() - 4) +
                            ".npz (one array per record, named by its ID), or give --format npy for a stream of "
                            ".npy arrays in one file");
  if (format == Format::kNpz) {
    // Each array is named by its record ID: a record selected twice would be two
    // members of one name, of which np.load keeps one.
    // One bit per record of the store: memory follows the store's length (1.25 MB at
    // 10^7 records), not the selection's.
    std::vector<bool> seen(store.length());
    for (uint64_t i = 0; i < total; ++i) {
      const uint64_t id = id_at(i);
      if (seen[id])
        return invalid_argument("record " + std::to_string(id) +
                                " is selected twice; an .npz names each array by its record ID (select each once)");
      seen[id] = true;
    }
  }
  return Status::ok();
}

// Writes records one at a time in a --format other than tar (npy, raw, text, jsonl, npz).
class RecordWriter {
 public:
  RecordWriter(const CatArgs& a, Format format, Framing framing, const Schema& schema, Output& out, NpzWriter* npz)
      : a_(a),
        format_(format),
        framing_(framing),
        schema_(schema),
        out_(out),
        npz_(npz),
        prefix_(schema.is_dense() ? 0 : schema.shape_prefix_bytes()),
        // Ragged 1-D '|u1' records are bytes (lines, documents): text and jsonl show them
        // as strings unless --bytes-as-numbers.
        bytes_as_strings_(!a.bytes_as_numbers && !schema.is_dense() && schema.ndim == 1 && schema.dtype.str() == "|u1"),
        // A person reads a terminal: records of more than kSummaryThreshold elements are
        // summarised there, as numpy prints them; files and pipes get every value.
        summarise_(out.is_terminal() && !a.full) {}

  // Record `id`, stored as `bytes` bytes at `record` (its shape prefix, then its payload).
  Status write(uint64_t id, const uint8_t* record, uint64_t bytes) {
    const std::vector<uint64_t> dims = schema_.is_dense() ? *schema_.item_shape : ragged_dims(schema_, record);
    const uint8_t* payload = record + prefix_;
    const uint64_t payload_bytes = bytes - prefix_;
    // Text and jsonl to a terminal name a record of bytes that is no text.
    const std::string named = bytes_as_strings_ && summarise_ && (format_ == Format::kText || format_ == Format::kJsonl)
                                  ? binary_words({payload, payload_bytes})
                                  : std::string();
    switch (format_) {
      case Format::kNpy:
        ZREC_RETURN_IF_ERROR(out_.write(encode_npy_header(schema_.dtype, dims)));
        ZREC_RETURN_IF_ERROR(out_.write(payload, payload_bytes));
        break;
      case Format::kRaw:
        if (framing_ != Framing::kNone) ZREC_RETURN_IF_ERROR(write_framed(out_, framing_, id, payload, payload_bytes));
        else ZREC_RETURN_IF_ERROR(out_.write(payload, payload_bytes));
        break;
      case Format::kText:
        text_.clear();
        text_ += std::to_string(id);
        text_ += '\t';
        if (!named.empty()) text_ += named;
        else if (bytes_as_strings_) append_bytes_as_string(text_, {payload, payload_bytes}, /*json=*/false);
        else append_text_record(text_, schema_.dtype, dims, payload, summarise_);
        text_ += '\n';
        ZREC_RETURN_IF_ERROR(out_.write(text_));
        break;
      case Format::kJsonl:
        text_.clear();
        if (a_.tar.with_ids) text_ += "{\"id\": " + std::to_string(id) + ", \"record\": ";
        if (!named.empty()) append_json_string(text_, named);
        else if (bytes_as_strings_) append_bytes_as_string(text_, {payload, payload_bytes}, /*json=*/true);
        else append_json_record(text_, schema_.dtype, dims, payload, summarise_);
        if (a_.tar.with_ids) text_ += '}';
        text_ += '\n';
        ZREC_RETURN_IF_ERROR(out_.write(text_));
        break;
      case Format::kNpz:
        ZREC_RETURN_IF_ERROR(
            npz_->add(std::to_string(id), encode_npy_header(schema_.dtype, dims), payload, payload_bytes));
        break;
      case Format::kTar:  // cat_tar wrote it
        break;
    }
    return Status::ok();
  }

 private:
  const CatArgs& a_;
  const Format format_;
  const Framing framing_;
  const Schema& schema_;
  Output& out_;
  NpzWriter* npz_;
  const uint64_t prefix_;
  const bool bytes_as_strings_;
  const bool summarise_;
  std::string text_;
};

Status run_cat(const CatArgs& a, const GlobalOptions& g) {
  const Framing framing = framing_to_write(a);
  if (a.format != "tar" && is_root(a.tar.path, g)) return run_cat_root(a, g);
  const std::string name = format_to_write(a);
  const auto format = static_cast<Format>(choose(cat_format_names(), "--format", name));
  if (format == Format::kTar) return run_cat_tar(a, g);
  check_record_options(a, format);

  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.tar.output, "-o", {a.tar.path, a.tar.indices_from, a.exclude_from}));
  ZREC_RETURN_IF_ERROR(refuse_existing_output(a.tar.output, "-o", a.tar.force));
  std::unique_ptr<Store> store;
  {
    InterruptScope during_lock_wait;  // --wait ends on SIGINT/SIGTERM: 130/143
    // While a writer appends: its last published state (later records are not seen).
    Context ctx = g.read_context(a.tar.path);
    ctx.snapshot_if_busy = !g.wait;
    ZREC_ASSIGN_OR_RETURN(store, Store::open(a.tar.path, {}, ctx));
  }
  std::vector<uint64_t> list;
  ZREC_ASSIGN_OR_RETURN(auto runs, cat_runs(a, store->length(), list));
  const SelectionIndex selection(runs, list);
  ZREC_ASSIGN_OR_RETURN(const RecordOrder order, order_of(a, selection, "records"));
  const uint64_t total = order.total();
  const auto id_at = [&order](uint64_t i) { return order.id_at(i); };
  const Schema& schema = store->schema();
  ZREC_RETURN_IF_ERROR(check_selection_fits(a, format, *store, order));
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open(a.tar.output, "-o", a.tar.force));
  if (format == Format::kNpy || format == Format::kRaw || format == Format::kNpz) check_binary_output(out, a.tar.force);
  std::unique_ptr<NpzWriter> npz;
  if (format == Format::kNpz) {
    ZREC_ASSIGN_OR_RETURN(npz, NpzWriter::open(out));
  }

  if (format == Format::kNpy && schema.is_dense()) {
    // One array (n, *item_shape): the header up front, then the records back to back.
    std::vector<uint64_t> shape = {total};
    shape.insert(shape.end(), schema.item_shape->begin(), schema.item_shape->end());
    ZREC_RETURN_IF_ERROR(out.write(encode_npy_header(schema.dtype, shape)));
  }
  RecordWriter writer(a, format, framing, schema, out, npz.get());
  ProgressMeter meter(g, "cat");
  meter.set_total_records(total);
  uint64_t logical_bytes = 0, records_done = 0;
  const auto write_window = [&](const Window& w) -> Status {
    logical_bytes += w.offsets.back();
    records_done += w.ids.size();
    meter.update(records_done, logical_bytes);
    if (schema.is_dense() && framing == Framing::kNone && (format == Format::kNpy || format == Format::kRaw))
      return out.write(w.data, w.offsets.back());
    for (size_t k = 0; k < w.ids.size(); ++k)
      ZREC_RETURN_IF_ERROR(writer.write(w.ids[k], w.data + w.offsets[k], w.offsets[k + 1] - w.offsets[k]));
    return Status::ok();
  };
  // Feed the store a bounded chunk of IDs at a time, in selection order. Scattered IDs
  // (a shuffle, a sample) go 2^22 at a time, as the store reads their table in one step
  // (Store::scan): each step reads the table pieces its IDs fall in, the whole table
  // past a few million records, so fewer steps read it fewer times.
  const uint64_t ids_per_scan = uint64_t{1} << (a.tar.shuffle || a.tar.sample ? 22 : 20);
  std::vector<uint64_t> ids;
  Status s;
  for (uint64_t k = 0; k < total && s.is_ok(); k += ids_per_scan) {
    ids.clear();
    for (uint64_t i = k; i < std::min(total, k + ids_per_scan); ++i) ids.push_back(id_at(i));
    s = store->scan(ids, a.tar.window_mib << 20, write_window);
  }
  meter.finish();
  ZREC_RETURN_IF_ERROR(s);
  if (npz) ZREC_RETURN_IF_ERROR(npz->close());
  return out.flush();
}

}  // namespace

Command register_cat(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<CatArgs>();
  CLI::App* cmd = root.add_subcommand("cat", "Write records to stdout or a file");
  cmd->add_option("store", args->tar.path,
                  "Store to read, or a root of named streams (JSON lines, one object per sample; or --format tar)")
      ->required();
  auto* selection = cmd->add_option("selection", args->tar.selection,
                                    "Records, as NumPy indexing of axis 0: 7, -1, 10:20, ::100, 3,5,8 (default: all)");
  cmd->add_option("--indices-from", args->tar.indices_from, "File (or -) with one record index per line");
  cmd->add_option("--exclude-from", args->exclude_from,
                  "File (or -) with one record index per line: every record but those, in ID order");
  auto* format = cmd->add_option(
      "--format", args->format,
      "npy: one .npy (Dense) or a stream of .npy (Ragged); raw: payload bytes only; "
      "text: '<id>TAB<values>' lines; jsonl: one JSON value per record (nested arrays; a bare value for "
      "scalar records; Ragged 1-D '|u1' records as strings in both); "
      "tar: a WebDataset tar of a root of named streams (or of one store), members <key>.<ext>; "
      "npz: NumPy's .npz, one array per record named by its ID "
      "(default: npy, or text when stdout is a terminal, or npz for -o NAME.npz)");
  offer_choices(format, cat_format_names());
  auto* framing = cmd->add_option(
      "--framing", args->framing,
      "Payload bytes framed as append-stream --framing reads them, so that 'append-stream --framing X' "
      "then 'cat --framing X' gives back the same bytes: lines (each record then a newline; a record "
      "holding a newline is refused), nul (then a NUL), u32le or u64le (a little-endian length, then the "
      "bytes)");
  offer_choices(framing, framing_names());
  cmd->add_flag("--bytes-as-numbers", args->bytes_as_numbers,
                "text, jsonl: show Ragged 1-D '|u1' records as numbers (byte values), not as strings");
  cmd->add_flag("--full", args->full,
                "text, jsonl: print every value of a record on a terminal too (there, records of more than " +
                    std::to_string(kSummaryThreshold) + " values show the first and last " +
                    std::to_string(kEdgeItems) +
                    " of each axis around '...', as numpy prints them; files and pipes always get every value)");
  add_output_options(cmd, args->tar.output, args->tar.force, "Output file", "write binary formats even to a terminal");
  cmd->add_option("--keys", args->tar.keys,
                  "--format tar: sample keys, one line per record (as append-tar --keys writes)");
  cmd->add_flag("--absolute-names", args->tar.absolute_names,
                "--format tar: keep keys that are absolute or have a '..' component as member names (refused by "
                "default: tar would extract them outside the directory)");
  offer_choices(cmd->add_option("--arrays", args->arrays,
                                "--format tar: how streams of arrays become members: npy (default), a .npy file "
                                "per record, KEY.STREAM.npy, shape and dtype kept (what webdataset decodes and "
                                "append-tar reads back); text, their numbers space-separated, KEY.STREAM (the "
                                "shape lost). Bytes ('|u1' Ragged ndim 1) and --parse numbers ('<i8'/'<f8' "
                                "scalars and vectors) stay bytes and text"),
                tar_array_names());
  cmd->add_option("--maxcount", args->tar.maxcount,
                  "--format tar: write shards of at most N samples each, named by -o PATTERN (exactly one %d, "
                  "e.g. -o 'shard-%06d.tar')");
  cmd->add_option("--maxsize", args->maxsize,
                  "--format tar: write shards of at most BYTES each (e.g. 1G; headers included; a larger sample "
                  "gets a shard of its own), named by -o PATTERN");
  auto* sample = cmd->add_option("--sample", args->tar.sample,
                                 "Write N records drawn IID with replacement (a record may come more than once) from "
                                 "the selection, in draw order; with --distinct, N different records");
  cmd->add_flag("--distinct", args->distinct,
                "With --sample N: draw without replacement, N different records (the first N of --shuffle's order "
                "for the same seed; N at most the selection)");
  cmd->add_flag("--shuffle", args->tar.shuffle, "Write the selection in a random order (a permutation: each once)")
      ->excludes(sample);
  cmd->add_option("--seed", args->seed, "Seed of --sample / --shuffle: same seed, same records (default: 0)");
  cmd->add_flag("--with-ids", args->tar.with_ids,
                "jsonl: write each record as {\"id\": ID, \"record\": VALUE}; tar: each sample gets a member KEY.id "
                "holding its record ID (webdataset reads .id as an int; append-tar --parse id=int keeps it)");
  add_window_mib_option(cmd, args->tar.window_mib, "read window");
  return Command{cmd,
                 [args, selection, &global]() {
                   if (selection->count() > 0 && args->tar.selection.empty())
                     throw UsageError("invalid selection '': empty selection");
                   return run_cat(*args, global);
                 },
                 nullptr, [args] { return args->tar.output == "-"; }};
}

}  // namespace zrec::cli
