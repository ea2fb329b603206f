// zrec append-h5: the rows of an HDF5 dataset, along its first axis, become records:
// of a Dense store whose dtype and item shape are the dataset's element type and other
// axes, or, for a 1-D dataset of variable-length sequences of numbers, of a Ragged
// ndim-1 store. --create makes the store from the dataset. --start/--stop select rows,
// so that many processes can convert parts and `concat` them. With --dataset
// H5PATH=STREAM, STORE is a root and each dataset feeds one of its streams
// (h5_root_append.h). Rows are read in windows of --window-mib (h5_rows.h).
#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/store_writer.h"
#include "zrec/transfer.h"

#include "cli/app/command.h"
#include "cli/import/append_command.h"
#include "cli/import/append_session.h"
#include "cli/import/h5_dataset.h"
#include "cli/import/h5_root_append.h"
#include "cli/import/h5_rows.h"
#include "cli/import/new_store_options.h"
#include "cli/options/usage_error.h"

namespace zrec::cli {

namespace {

struct AppendH5Args {
  std::string store, file, dataset;
  std::vector<std::string> datasets;  // --dataset H5PATH=STREAM: STORE is a root, every stream fed at once
  uint64_t start = 0;
  std::optional<uint64_t> stop;
  bool create = false;
  bool allow_external = false;
  NewStoreArgs new_store;
  AppendArgs append;
};

// What append-h5 is to `zrec --help`, and its STORE operand.
constexpr AppendCommandForm kAppendH5{.name = "append-h5",
                                      .about = "Append the rows of an HDF5 dataset, along its first axis, as records",
                                      .store =
                                          "Store to append to (Dense of the dataset's dtype and row shape; "
                                          "Ragged ndim 1 for variable-length sequences); with --dataset, a root",
                                      .check_present = false};

// Appends refs to the session in batches that end at its checkpoints.
Status append_all(AppendSession& session, std::span<const RecordRef> refs) {
  while (!refs.empty()) {
    const uint64_t n = std::min<uint64_t>(refs.size(), session.room_before_checkpoint());
    ZREC_RETURN_IF_ERROR(session.append(refs.first(n)));
    refs = refs.subspan(n);
  }
  return Status::ok();
}

Status append_rows(AppendSession& session, H5Rows& rows) {
  for (;;) {
    ZREC_RETURN_IF_ERROR(session.check_interrupt());
    ZREC_ASSIGN_OR_RETURN(const uint64_t n, rows.ready());
    if (n == 0) return Status::ok();
    const uint64_t before = rows.bytes_taken();
    const std::span<const RecordRef> refs = rows.take(n);
    session.count_input(rows.bytes_taken() - before);
    ZREC_RETURN_IF_ERROR(append_all(session, refs));
  }
}

Status run_append_h5(const AppendH5Args& a, const GlobalOptions& g) {
  if (a.stop && a.start > *a.stop)
    throw UsageError("--start " + std::to_string(a.start) + " is past --stop " + std::to_string(*a.stop));
  if (!a.datasets.empty()) {
    if (!a.dataset.empty())
      throw UsageError("give the datasets of a root as --dataset H5PATH=STREAM only (not also as DATASET)");
    if (a.create)
      throw UsageError("--create: a root's streams are made with zrec create ROOT/NAME and zrec adopt ROOT");
    return append_h5_to_root({a.store, a.file, a.datasets, a.start, a.stop, a.allow_external}, a.append, g);
  }
  if (a.dataset.empty()) throw UsageError("no dataset: give DATASET, or --dataset H5PATH=STREAM for a root");
  std::optional<CreateOptions> create;
  if (a.create) {
    ZREC_ASSIGN_OR_RETURN(create, new_store_options(a.new_store, a.append.checksum.value_or(false), a.append.level));
  }
  // The source first: a refused dataset leaves the store untouched (and uncreated).
  ZREC_ASSIGN_OR_RETURN(auto ds, H5Dataset::open(a.file, a.dataset, a.allow_external));
  const Schema& schema = ds->schema();
  // Python slice rules: a --start or --stop past the end stops at the end.
  const uint64_t stop = std::min(a.stop.value_or(ds->rows()), ds->rows());
  const uint64_t start = std::min(a.start, stop);
  ZREC_ASSIGN_OR_RETURN(auto rows, H5Rows::open(*ds, start, stop, a.append.window_mib << 20));

  CreatedStore created(a.store);
  if (create && !is_store_dir(a.store)) {
    create->schema = schema;
    set_new_store_codec(*create, a.new_store, a.append.checksum.value_or(false), a.append.level);
    ZREC_RETURN_IF_ERROR(created.create(*create, g.context(Work::kWrite)));
    spdlog::info("created '{}': {}, codec {}, {} shard{}", a.store, schema.describe(), to_string(create->codec),
                 create->data_shards, create->data_shards == 1 ? "" : "s");
  }
  WriterOptions options;
  options.level = a.append.level;
  auto opened = AppendSession::open("append-h5", a.store, a.append, g, options);
  if (!opened.is_ok() && opened.status().code() == StatusCode::kNotFound && !a.create)
    return Status(StatusCode::kNotFound, opened.status().message() + " (--create makes it from the dataset)");
  if (!opened.is_ok()) return created.take_back(opened.status());
  auto session = std::move(opened).value();
  if (created) session->note_created();
  Status s = [&]() -> Status {
    const std::string diff = schema_difference(session->schema(), schema);
    if (!diff.empty())
      return invalid_argument("'" + a.store + "' is " + session->schema().describe() + " but the rows of " +
                              ds->where() + " are " + schema.describe() + " records (" + diff + ")");
    session->progress().set_total_records(stop - start);
    // --skip-first, and the rows already in the store (--from-length): the first rows of
    // the selection are skipped without being read.
    const uint64_t skip = std::min(session->to_skip(), stop - start);
    session->skip_records(skip);
    rows->skip(skip);
    return append_rows(*session, *rows);
  }();
  return created.finish(std::move(session), std::move(s));
}

// append-h5's own options, between STORE and the options every append takes.
void add_h5_options(CLI::App* cmd, AppendH5Args& a) {
  cmd->add_option("file", a.file, "HDF5 file")->required();
  cmd->add_option("dataset", a.dataset, "Dataset in the file: 'images', '/train/x'");
  cmd->add_option("--dataset", a.datasets,
                  "H5PATH=STREAM: STORE is a root; the rows of dataset H5PATH go to its stream STREAM, row i of "
                  "every dataset making sample i (name every stream of the root; the datasets hold the same number "
                  "of rows)")
      ->allow_extra_args(false);
  cmd->add_option("--start", a.start, "First row to append (default 0)");
  cmd->add_option("--stop", a.stop, "Row to stop before (default: the end; past the end: the end)");
  add_create_options(cmd, a.create, a.new_store, "from the dataset's type and shape");
  cmd->add_flag("--allow-external", a.allow_external,
                "Read a dataset whose values come from other files (external links, external raw data, virtual "
                "datasets): only for HDF5 files you trust, since they may name any file");
}

}  // namespace

Command register_append_h5(CLI::App& root, const GlobalOptions& global) {
  return register_append(root, global, kAppendH5, add_h5_options, run_append_h5);
}

}  // namespace zrec::cli
