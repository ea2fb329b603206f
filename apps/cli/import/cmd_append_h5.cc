// zrec append-h5: the rows of an HDF5 dataset, along its first axis, become records:
// of a Dense store whose dtype and item shape are the dataset's element type and other
// axes, or, for a 1-D dataset of variable-length sequences of numbers, of a Ragged
// ndim-1 store. --create makes the store from the dataset. --start/--stop select rows,
// so that many processes can convert parts and `concat` them.
//
// Memory: rows are read in windows of --window-mib, cut at the dataset's chunk
// boundaries so each chunk is read and decompressed once; when one band of chunks
// (chunk rows x all other axes) is larger than the window, HDF5's chunk cache holds
// that band while windows of fewer rows read it. Dense rows are read straight into one
// buffer of the window's size and appended from there; variable-length rows are
// appended from the memory HDF5 reads them into, window by window, the number of rows
// per window following their mean size.
#include <algorithm>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/limits.h"
#include "zrec/store_writer.h"
#include "zrec/transfer.h"

#include "cli/app/command.h"
#include "cli/import/append_session.h"
#include "cli/import/h5_dataset.h"
#include "cli/import/new_store_options.h"
#include "cli/import/record_window.h"
#include "cli/options/usage_error.h"

namespace zrec::cli {

namespace {

struct AppendH5Args {
  std::string store, file, dataset;
  uint64_t start = 0;
  std::optional<uint64_t> stop;
  bool create = false;
  bool allow_external = false;
  NewStoreArgs new_store;
  AppendArgs append;
};

// Rows per read at most: each costs a RecordRef besides its bytes (as RecordWindow).
constexpr uint64_t kMaxRowsPerRead = RecordWindow::kMaxRecords;

// Appends refs to the session in batches that end at its checkpoints.
Status append_all(AppendSession& session, std::span<const RecordRef> refs) {
  while (!refs.empty()) {
    const uint64_t n = std::min<uint64_t>(refs.size(), session.room_before_checkpoint());
    ZREC_RETURN_IF_ERROR(session.append(refs.first(n)));
    refs = refs.subspan(n);
  }
  return Status::ok();
}

// The end of the window that starts at row `pos`: `rows` rows on, or, when windows
// hold whole chunks, the chunk boundary that many rows on (so windows stay aligned).
uint64_t window_end(uint64_t pos, uint64_t rows, uint64_t chunk_rows, uint64_t stop) {
  if (chunk_rows > 0 && rows >= chunk_rows) return std::min(stop, pos / chunk_rows * chunk_rows + rows);
  return std::min(stop, pos + rows);
}

// Rows per window rounded down to whole chunks, when it holds at least one.
uint64_t whole_chunks(uint64_t rows, uint64_t chunk_rows) {
  rows = std::clamp<uint64_t>(rows, 1, kMaxRowsPerRead);
  return chunk_rows > 0 && rows >= chunk_rows ? rows / chunk_rows * chunk_rows : rows;
}

Status append_dense(AppendSession& session, H5Dataset& ds, uint64_t pos, uint64_t stop) {
  const uint64_t row_bytes = ds.row_bytes();
  const uint64_t rows = whole_chunks(session.window_bytes() / row_bytes, ds.chunk_rows());
  if (ds.chunk_rows() > rows) ZREC_RETURN_IF_ERROR(ds.use_chunk_cache(ds.band_bytes()));
  std::vector<uint8_t, UninitializedAllocator<uint8_t>> buffer(std::min(rows, stop - pos) * row_bytes);
  std::vector<RecordRef> refs;
  while (pos < stop) {
    ZREC_RETURN_IF_ERROR(session.check_interrupt());
    const uint64_t end = window_end(pos, rows, ds.chunk_rows(), stop), n = end - pos;
    ZREC_RETURN_IF_ERROR(ds.read_dense(pos, n, buffer.data()));
    refs.resize(n);
    for (uint64_t i = 0; i < n; ++i) refs[i] = RecordRef{buffer.data() + i * row_bytes, row_bytes, nullptr};
    session.count_input(n * row_bytes);
    ZREC_RETURN_IF_ERROR(append_all(session, refs));
    pos = end;
  }
  return Status::ok();
}

Status append_vlen(AppendSession& session, H5Dataset& ds, uint64_t pos, uint64_t stop) {
  const uint64_t budget = session.window_bytes(), itemsize = ds.schema().dtype.itemsize;
  // Until the first window tells the rows' mean size: one chunk, or 1024 rows.
  uint64_t rows = whole_chunks(ds.chunk_rows() > 0 ? ds.chunk_rows() : 1024, ds.chunk_rows());
  H5VlenRows block;
  std::vector<RecordRef> refs;
  std::vector<uint64_t> dims;
  while (pos < stop) {
    ZREC_RETURN_IF_ERROR(session.check_interrupt());
    const uint64_t end = window_end(pos, rows, ds.chunk_rows(), stop), n = end - pos;
    ZREC_RETURN_IF_ERROR(ds.read_vlen(pos, n, block));
    refs.resize(n);
    dims.resize(n);
    uint64_t bytes = 0;
    std::string bad;  // what is wrong with the first row that cannot be a record
    uint64_t good = 0;
    for (; good < n && bad.empty(); ++good) {
      const uint64_t len = block.length(good);
      const std::string row = "row " + std::to_string(pos + good) + " of " + ds.where();
      if (len == 0) bad = row + " is an empty sequence (records are nonempty)";
      if (len > kMaxRagged1dPayloadBytes / itemsize)
        bad = row + " holds " + std::to_string(len) + " values; a record holds at most " +
              std::to_string(kMaxRagged1dPayloadBytes) + " bytes";
      if (!bad.empty()) break;
      dims[good] = len;
      refs[good] = RecordRef{block.data(good), len * itemsize, &dims[good]};
      bytes += len * itemsize;
    }
    // The rows before a bad one are appended first, so the checkpoints among them
    // publish as they would have without it.
    session.count_input(bytes);
    ZREC_RETURN_IF_ERROR(append_all(session, std::span<const RecordRef>(refs).first(good)));
    if (!bad.empty()) return invalid_argument(bad);
    pos = end;
    // The next window: as many rows as the budget holds at this window's mean row size.
    rows = whole_chunks(std::max<uint64_t>(1, budget / std::max<uint64_t>(1, bytes / n)), ds.chunk_rows());
  }
  return Status::ok();
}

Status run_append_h5(const AppendH5Args& a, const GlobalOptions& g) {
  if (a.stop && a.start > *a.stop)
    throw UsageError("--start " + std::to_string(a.start) + " is past --stop " + std::to_string(*a.stop));
  std::optional<CreateOptions> create;
  if (a.create) {
    ZREC_ASSIGN_OR_RETURN(create, new_store_options(a.new_store, a.append.checksum.value_or(false), a.append.level));
  }
  // The source first: a refused dataset leaves the store untouched (and uncreated).
  ZREC_ASSIGN_OR_RETURN(auto ds, H5Dataset::open(a.file, a.dataset, a.allow_external));
  const Schema& schema = ds->schema();
  // A band of chunks (chunk rows x every other axis) is decompressed whole and, when a
  // window holds fewer rows, cached: it must fit the window, or a small file of highly
  // compressed chunks would cost gigabytes.
  const uint64_t window = a.append.window_mib << 20;
  if (ds->band_bytes() > window)
    return invalid_argument(ds->where() + " is stored in chunks of " + std::to_string(ds->chunk_rows()) +
                            " rows, and the chunks of those rows (all other axes) are " +
                            std::to_string(ds->band_bytes()) + " bytes decompressed, more than the window (" +
                            std::to_string(window) + " bytes): give --window-mib " +
                            std::to_string((ds->band_bytes() + (uint64_t{1} << 20) - 1) >> 20) + " or more");
  // Python slice rules: a --start or --stop past the end stops at the end.
  const uint64_t stop = std::min(a.stop.value_or(ds->rows()), ds->rows());
  const uint64_t start = std::min(a.start, stop);

  CreatedStore created(a.store);
  if (create && !is_store_dir(a.store)) {
    create->schema = schema;
    set_new_store_codec(*create, a.new_store, a.append.checksum.value_or(false), a.append.level);
    ZREC_RETURN_IF_ERROR(created.create(*create));
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
    if (schema.is_dense()) return append_dense(*session, *ds, start + skip, stop);
    return append_vlen(*session, *ds, start + skip, stop);
  }();
  return created.finish(std::move(session), std::move(s));
}

}  // namespace

Command register_append_h5(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<AppendH5Args>();
  CLI::App* cmd =
      root.add_subcommand("append-h5", "Append the rows of an HDF5 dataset, along its first axis, as records");
  cmd->add_option("store", args->store,
                  "Store to append to (Dense of the dataset's dtype and row shape; Ragged "
                  "ndim 1 for variable-length sequences)")
      ->required();
  cmd->add_option("file", args->file, "HDF5 file")->required();
  cmd->add_option("dataset", args->dataset, "Dataset in the file: 'images', '/train/x'")->required();
  cmd->add_option("--start", args->start, "First row to append (default 0)");
  cmd->add_option("--stop", args->stop, "Row to stop before (default: the end; past the end: the end)");
  add_create_options(cmd, args->create, args->new_store, "from the dataset's type and shape");
  cmd->add_flag("--allow-external", args->allow_external,
                "Read a dataset whose values come from other files (external links, external raw data, virtual "
                "datasets): only for HDF5 files you trust, since they may name any file");
  add_append_options(cmd, args->append);
  return Command{cmd, [args, &global]() { return run_append_h5(*args, global); }, nullptr};
}

}  // namespace zrec::cli
