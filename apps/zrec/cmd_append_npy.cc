// zrec append-npy: append the arrays of .npy files (or a stream of .npy on stdin) as
// records, all or nothing: nothing is published unless every array was appended.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>

#include "zrec/cli_util.h"
#include "zrec/commands.h"
#include "zrec/console.h"
#include "zrec/npy.h"
#include "zrec/record_window.h"
#include "zrec/store.h"
#include "zrec/store_writer.h"

namespace zrec::cli {

namespace {

struct AppendNpyArgs {
  std::string store;
  std::vector<std::string> inputs;
  bool batch = false;
  uint64_t window_mib = kDefaultWindowBytes >> 20;
  std::optional<bool> checksum;  // --checksum / --no-checksum; unset: the store's setting
};

// How one array becomes records.
struct ArrayPlan {
  uint64_t records = 0;
  uint64_t record_bytes = 0;
  std::vector<uint64_t> dims;  // Ragged: the dims of every record of this array
};

Result<ArrayPlan> plan_array(const NpyHeader& h, const Schema& schema, bool batch, const std::string& where) {
  auto bad = [&](const std::string& rule) { return invalid_argument(where + ": " + rule); };
  if (h.dtype != schema.dtype)
    return bad("dtype '" + h.dtype.str() + "' does not match the store's '" + schema.dtype.str() + "'");
  if (h.fortran_order && h.shape.size() > 1)
    return bad("Fortran-order arrays are not supported; save np.ascontiguousarray(a) instead");
  // Zero-element arrays are refused, even an empty batch (0, *item_shape): an input
  // with nothing in it is almost always a bug upstream worth stopping for.
  if (h.element_count == 0)
    return bad("array of shape " + shape_to_string(h.shape) + " has no elements (records must be nonempty)");
  ArrayPlan plan;
  if (schema.is_dense()) {
    // (B, *item_shape): axis 0 is the batch.
    const auto& item = *schema.item_shape;
    if (h.shape.size() != item.size() + 1 || !std::equal(item.begin(), item.end(), h.shape.begin() + 1)) {
      std::string want = "(B,";
      for (uint64_t d : item) want += " " + std::to_string(d) + ",";
      if (!item.empty()) want.pop_back();
      return bad("shape " + shape_to_string(h.shape) + " is not " + want + ") for records of " + schema.describe());
    }
    plan.records = h.shape[0];
    plan.record_bytes = schema.dense_width();
    return plan;
  }
  const size_t expect_rank = schema.ndim + (batch ? 1 : 0);
  if (h.shape.size() != expect_rank)
    return bad("array has " + std::to_string(h.shape.size()) + " dims; records of this store have " +
               std::to_string(schema.ndim) + (batch ? " (plus the batch axis with --batch)" : ""));
  plan.records = batch ? h.shape[0] : 1;
  plan.dims.assign(h.shape.begin() + (batch ? 1 : 0), h.shape.end());
  plan.record_bytes = h.data_bytes / plan.records;
  if (schema.shape_prefix_bytes() + plan.record_bytes > ((uint64_t{1} << 31) - 1))
    return bad("a record of shape " + shape_to_string(plan.dims) + " is 2 GiB or larger (the format's limit)");
  return plan;
}

Status append_stream(io::InputStream& in, const AppendNpyArgs& a, const Schema& schema, RecordWindow& window) {
  for (uint64_t index = 0;; ++index) {
    const uint64_t start = in.position();
    ZREC_ASSIGN_OR_RETURN(auto header, read_npy_header(in));
    if (!header) {
      // An empty stdin appends nothing (a pipeline with nothing to say); a named file
      // without an array is a mistake worth reporting.
      if (index == 0 && in.name() != "-") return invalid_argument("'" + in.name() + "': no .npy array in the file");
      return Status::ok();
    }
    const std::string where = "'" + in.name() + "': array at byte " + std::to_string(start);
    ZREC_ASSIGN_OR_RETURN(ArrayPlan plan, plan_array(*header, schema, a.batch, where));
    for (uint64_t left = plan.records; left > 0;) {
      ZREC_ASSIGN_OR_RETURN(uint64_t n, window.reserve(left, plan.record_bytes));
      ZREC_ASSIGN_OR_RETURN(size_t got, in.read_full(window.next_payload(), n * plan.record_bytes));
      if (got < n * plan.record_bytes)
        return invalid_argument(where + ": truncated: the input ends inside the array data (" +
                                std::to_string(header->data_bytes) + " bytes declared)");
      for (uint64_t k = 0; k < n; ++k) window.add(plan.record_bytes, plan.dims.data());
      left -= n;
    }
  }
}

Status run_append_npy(const AppendNpyArgs& a, const GlobalOptions& g) {
  for (const auto& input : a.inputs)
    if (input == "-" && stdin_is_terminal())
      return usage_error("refusing to read .npy data from a terminal (pipe it in, or name files)");
  const auto started = std::chrono::steady_clock::now();
  ZREC_ASSIGN_OR_RETURN(auto writer, StoreWriter::open(a.store, {.threads = g.threads, .wait = g.wait, .checksum = a.checksum}));
  if (a.batch && writer->schema().is_dense())
    return usage_error("--batch is for Ragged stores; Dense stores always take axis 0 as the batch");
  const uint64_t before = writer->published_length();
  RecordWindow window(*writer, a.window_mib << 20);
  for (const auto& input : a.inputs) {
    ZREC_ASSIGN_OR_RETURN(auto in, io::InputStream::open(input));
    ZREC_RETURN_IF_ERROR(append_stream(in, a, writer->schema(), window));
  }
  ZREC_RETURN_IF_ERROR(window.flush());
  ZREC_RETURN_IF_ERROR(writer->close());
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (g.verbosity >= 0)
    std::fprintf(stderr, "zrec append-npy: appended %llu records (%.1f MiB) to '%s' in %.2f s; it now holds %llu\n",
                 static_cast<unsigned long long>(window.records_appended()),
                 window.bytes_appended() / 1048576.0, a.store.c_str(), secs,
                 static_cast<unsigned long long>(before + window.records_appended()));
  return Status::ok();
}

}  // namespace

Command register_append_npy(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<AppendNpyArgs>();
  CLI::App* cmd = root.add_subcommand("append-npy", "Append the arrays of .npy files (or stdin) as records");
  cmd->add_option("store", args->store, "Store to append to")->required();
  cmd->add_option("inputs", args->inputs, ".npy files, or - for a stream of .npy arrays on stdin")->required();
  cmd->add_flag("--batch", args->batch, "Ragged: axis 0 of each array is a batch of records");
  auto* checksum = cmd->add_flag_callback("--checksum", [args] { args->checksum = true; },
                                          "zstd frames get a content checksum (default: as the store's records, "
                                          "or as create --checksum set it)");
  cmd->add_flag_callback("--no-checksum", [args] { args->checksum = false; }, "zstd frames get no content checksum")
      ->excludes(checksum);
  cmd->add_option("--window-mib", args->window_mib, "Memory budget of one append window, MiB")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->footer(
      "Dense stores take arrays shaped (B, *item_shape); Ragged stores take each array as one\n"
      "record (or, with --batch, axis 0 as records). The dtype must equal the store's exactly.\n"
      "The whole invocation is one all-or-nothing append.\n\n"
      "Examples:\n"
      "  zrec append-npy images/ batch0.npy batch1.npy\n"
      "  python gen.py | zrec append-npy tokens/ -\n"
      "  zrec append-npy --batch tokens/ padded_rows.npy");
  return Command{cmd, [args, &global]() { return run_append_npy(*args, global); }};
}

}  // namespace zrec::cli
