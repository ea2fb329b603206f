// append_h5_to_root: see h5_root_append.h.
//
// Every dataset is opened and checked before the root is touched: the same number of
// rows in each (else both are named), each band of chunks within the window. Then,
// under the root's lock, each dataset's rows must be records of its stream's schema,
// exactly as for a single store. The datasets are read in step (h5_rows.h), each in its
// own windows: a run of samples is as long as the shortest window in hand allows, up to
// the next checkpoint.
#include "cli/import/h5_root_append.h"

#include <algorithm>
#include <memory>

#include "zrec/transfer.h"

#include "cli/formats/printable.h"
#include "cli/import/h5_dataset.h"
#include "cli/import/h5_rows.h"
#include "cli/import/root_append.h"
#include "cli/options/stream_pairs.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"

namespace zrec::cli {

namespace {

// Samples while every dataset has rows in hand, up to the next checkpoint.
Status feed_rows(std::vector<std::unique_ptr<H5Rows>>& rows, RootAppend& r) {
  std::vector<std::vector<RecordRef>> refs(rows.size());
  for (;;) {
    if (interrupted()) return cancelled("interrupted");
    uint64_t n = r.room();
    for (auto& rw : rows) {
      ZREC_ASSIGN_OR_RETURN(const uint64_t left, rw->ready());
      n = std::min(n, left);
    }
    if (n == 0) return Status::ok();  // the row counts are equal: every dataset ends here
    uint64_t in = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      const uint64_t before = rows[i]->bytes_taken();
      const std::span<const RecordRef> taken = rows[i]->take(n);
      refs[i].assign(taken.begin(), taken.end());
      in += rows[i]->bytes_taken() - before;
    }
    r.count_input(in);
    ZREC_RETURN_IF_ERROR(r.append(refs));
  }
}

}  // namespace

Status append_h5_to_root(const H5RootArgs& a, const AppendArgs& args, const GlobalOptions& global) {
  const std::vector<StreamPair> specs =
      parse_stream_pairs(a.datasets, {.option = "--dataset",
                                      .stream_first = false,
                                      .expected = "expected H5PATH=STREAM, e.g. --dataset /train/labels=label"});
  // The sources first: a refused dataset leaves the root untouched.
  std::vector<std::unique_ptr<H5Dataset>> ds;
  for (const auto& s : specs) {
    ZREC_ASSIGN_OR_RETURN(auto opened, H5Dataset::open(a.file, s.source, a.allow_external));
    ds.push_back(std::move(opened));
  }
  for (size_t i = 1; i < ds.size(); ++i)
    if (ds[i]->rows() != ds[0]->rows())
      return invalid_argument(ds[i]->where() + " holds " + std::to_string(ds[i]->rows()) + " rows, but " +
                              ds[0]->where() + " holds " + std::to_string(ds[0]->rows()) +
                              "; every stream gets one record per sample (row i of each dataset); nothing was "
                              "appended");
  // Python slice rules: a --start or --stop past the end stops at the end.
  const uint64_t stop = std::min(a.stop.value_or(ds[0]->rows()), ds[0]->rows());
  const uint64_t start = std::min(a.start, stop);
  std::vector<std::unique_ptr<H5Rows>> rows;
  for (auto& d : ds) {
    ZREC_ASSIGN_OR_RETURN(auto r, H5Rows::open(*d, start, stop, args.window_mib << 20));
    rows.push_back(std::move(r));
  }
  std::vector<std::string> names;
  for (const auto& s : specs) names.push_back(s.stream);
  InterruptScope interrupts;  // a --wait for the lock ends on SIGINT/SIGTERM
  ZREC_ASSIGN_OR_RETURN(auto r, RootAppend::open("append-h5", a.root, args, global, names));
  Status s = [&]() -> Status {
    for (size_t i = 0; i < ds.size(); ++i) {
      const Schema& schema = ds[i]->schema();
      const std::string diff = schema_difference(r->schema(i), schema);
      if (!diff.empty())
        return invalid_argument(r->label(i) + " is " + r->schema(i).describe() + " but the rows of " + ds[i]->where() +
                                " are " + schema.describe() + " records (" + diff + ")");
    }
    // --skip-first, and the samples the root holds already (--from-length): passed over
    // unread.
    const uint64_t skip = std::min(r->to_skip(), stop - start);
    for (auto& rw : rows) rw->skip(skip);
    r->skip(skip);
    return feed_rows(rows, *r);
  }();
  return r->finish(std::move(s));
}

}  // namespace zrec::cli
