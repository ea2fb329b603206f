// append_npy_to_root: see npy_root_append.h.
//
// Each stream's input is read as a sequence of records (axis 0 of each array for a Dense
// stream; each array, or each slice with --split-axis0, for a Ragged one). The inputs are
// walked in step, a run of samples at a time: the run is as long as the shortest array
// in hand allows, and each stream's records of the run are read straight into one
// buffer. Runs gather into a batch, appended when it reaches --window-mib (half of it
// when written behind) or the next checkpoint: a Ragged stream of one array per record
// makes runs of one sample, which appended one by one cost 1.3x the same appends stream
// by stream (bench_import.py). A batch is written behind (RootAppend::append_behind)
// while the next is read into the second of two.
//
// Before anything is appended, every input that is a regular file is scanned (headers
// read, data passed over by a seek): each array's dtype and shape are checked against its
// stream, and inputs of unequal record counts are refused naming both. Only stdin cannot
// be scanned; if it ends early or late, the run fails and nothing past the last
// checkpoint is kept.
#include "cli/import/npy_root_append.h"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "cli/formats/printable.h"
#include "cli/import/npy_plan.h"
#include "cli/import/record_window.h"
#include "cli/import/root_append.h"
#include "cli/options/stream_pairs.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/report/console.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

namespace {

// --stream NAME=FILE, each stream once; stdin ('-') for one stream at most, and never a
// terminal.
std::vector<StreamPair> parse_specs(const std::vector<std::string>& specs) {
  std::vector<StreamPair> out = parse_stream_pairs(
      specs,
      {.option = "--stream", .stream_first = true, .expected = "expected NAME=FILE, e.g. --stream label=labels.npy"});
  if (std::count_if(out.begin(), out.end(), [](const StreamPair& s) { return s.source == "-"; }) > 1)
    throw UsageError("--stream: stdin can be read only once: give '-' for one stream");
  for (const auto& s : out)
    if (s.source == "-" && stdin_is_terminal())
      throw UsageError("refusing to read .npy data from a terminal (pipe it in, or name files)");
  return out;
}

bool regular_file(const std::string& path) {
  struct stat st {};
  return path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// A batch's bytes: each is read into before it is read, so none is zeroed first.
using Bytes = std::vector<uint8_t, UninitializedAllocator<uint8_t>>;

// One stream's input, read an array at a time.
class NpySource {
 public:
  NpySource(io::InputStream in, const Schema& schema, bool split_axis0)
      : in_(std::move(in)), schema_(schema), split_(split_axis0) {}

  // Records left in the array in hand, reading the next header when it has none; 0 at
  // the end of the input.
  Result<uint64_t> ready() {
    while (left_ == 0 && !ended_) {
      const uint64_t start = in_.position();
      ZREC_ASSIGN_OR_RETURN(auto header, read_npy_header(in_));
      if (!header) {
        if (arrays_ == 0 && in_.name() != "-")
          return invalid_argument("'" + in_.name() + "': no .npy array in the file");
        ended_ = true;
        break;
      }
      ++arrays_;
      where_ = "'" + in_.name() + "': array at byte " + std::to_string(start);
      ZREC_ASSIGN_OR_RETURN(plan_, plan_array(*header, schema_, split_, where_));
      left_ = plan_.records;
      record_ = 0;
    }
    return left_;
  }
  uint64_t record_bytes() const { return plan_.record_bytes; }
  const uint64_t* dims() const { return plan_.dims.empty() ? nullptr : plan_.dims.data(); }
  uint64_t records_read() const { return total_; }
  const std::string& name() const { return in_.name(); }

  // Passes over n <= ready() records (a seek in a file).
  Status skip(uint64_t n) {
    const uint64_t bytes = n * plan_.record_bytes;
    ZREC_ASSIGN_OR_RETURN(uint64_t got, in_.skip(bytes));
    if (got < bytes) return truncated(record_ + got / plan_.record_bytes);
    return took(n);
  }
  // Reads n <= ready() records onto the end of `out`.
  Status read(uint64_t n, Bytes& out) {
    const size_t at = out.size(), bytes = n * plan_.record_bytes;
    out.resize(at + bytes);
    ZREC_ASSIGN_OR_RETURN(size_t got, in_.read_full(out.data() + at, bytes));
    if (got < bytes) return truncated(record_ + got / plan_.record_bytes);
    return took(n);
  }

 private:
  Status took(uint64_t n) {
    left_ -= n;
    record_ += n;
    total_ += n;
    return Status::ok();
  }
  Status truncated(uint64_t record) const {
    return invalid_argument(where_ + ": truncated: the input ends inside record " + std::to_string(record) +
                            " of the array's " + std::to_string(plan_.records));
  }

  io::InputStream in_;
  const Schema& schema_;
  const bool split_;
  ArrayPlan plan_;
  std::string where_;
  uint64_t left_ = 0, record_ = 0, total_ = 0, arrays_ = 0;
  bool ended_ = false;
};

// The records a regular file holds for `schema`, every array checked, data unread.
Result<uint64_t> count_records(const std::string& path, const Schema& schema, bool split_axis0,
                               const Control& control) {
  ZREC_ASSIGN_OR_RETURN(auto in, io::InputStream::open(path, control));
  NpySource src(std::move(in), schema, split_axis0);
  for (;;) {
    ZREC_ASSIGN_OR_RETURN(const uint64_t n, src.ready());
    if (n == 0) return src.records_read();
    ZREC_RETURN_IF_ERROR(src.skip(n));
  }
}

// Equal record counts of the inputs that are files, before anything is appended.
Status check_counts(const std::vector<StreamPair>& specs, RootAppend& r, bool split_axis0, const Control& control) {
  std::optional<size_t> first;
  uint64_t first_count = 0;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!regular_file(specs[i].source)) continue;
    const Result<uint64_t> counted = count_records(specs[i].source, r.schema(i), split_axis0, control);
    if (!counted.is_ok()) return counted.status().with_context(r.label(i));
    const uint64_t n = counted.value();
    if (!first) {
      first = i;
      first_count = n;
    } else if (n != first_count) {
      return invalid_argument(r.label(i) + ": '" + specs[i].source + "' holds " + std::to_string(n) + " records, but " +
                              r.label(*first) + ": '" + specs[*first].source + "' holds " +
                              std::to_string(first_count) +
                              "; every stream gets one record per sample; nothing was appended");
    }
  }
  return Status::ok();
}

// One stream's records of the batch in hand: their bytes, sizes and (Ragged) shapes.
struct NpyBatch {
  Bytes bytes;
  std::vector<uint64_t> sizes, dims;  // dims: ndim per record, Ragged only
};

// Two batches: one filled while the other is written (RootAppend::append_behind).
struct NpyBatches {
  std::vector<NpyBatch> batch[2];
  int cur = 0;
};

// Hands the batch in hand, if any, to the writers, and makes the other one the batch in
// hand.
Status flush_batch(NpyBatches& two, RootAppend& r, uint64_t& samples) {
  if (samples == 0) return Status::ok();
  std::vector<NpyBatch>& batches = two.batch[two.cur];
  std::vector<std::vector<RecordRef>> refs(batches.size());
  for (size_t i = 0; i < batches.size(); ++i) {
    NpyBatch& b = batches[i];
    const uint64_t ndim = r.schema(i).is_dense() ? 0 : r.schema(i).ndim;
    uint64_t at = 0;
    refs[i].resize(b.sizes.size());
    for (size_t k = 0; k < b.sizes.size(); ++k) {
      refs[i][k] = {b.bytes.data() + at, b.sizes[k], ndim == 0 ? nullptr : b.dims.data() + k * ndim};
      at += b.sizes[k];
    }
  }
  // Once the batch before is written: the one in hand becomes the one in flight.
  ZREC_RETURN_IF_ERROR(r.append_behind(std::move(refs)));
  two.cur ^= 1;
  for (auto& b : two.batch[two.cur]) {
    b.bytes.clear();
    b.sizes.clear();
    b.dims.clear();
  }
  samples = 0;
  return Status::ok();
}

// The inputs walked in step, a run of samples at a time, gathered into batches of
// `two`, which outlives the batch in flight.
Status feed(std::vector<NpySource>& srcs, RootAppend& r, NpyBatches& two, uint64_t window_bytes) {
  two.batch[0].resize(srcs.size());
  two.batch[1].resize(srcs.size());
  uint64_t batch = 0, batch_bytes = 0;  // samples and bytes in hand
  for (;;) {
    if (interrupted()) return cancelled("interrupted");
    uint64_t n = UINT64_MAX, sample_bytes = 0;
    std::optional<size_t> ended, going;
    for (size_t i = 0; i < srcs.size(); ++i) {
      ZREC_ASSIGN_OR_RETURN(const uint64_t left, srcs[i].ready());
      if (left == 0) ended = i;
      else going = i;
      n = std::min(n, left);
      sample_bytes += srcs[i].record_bytes();
    }
    if (!going) return flush_batch(two, r, batch);
    if (ended)
      return invalid_argument(r.label(*ended) + ": '" + srcs[*ended].name() + "' ends after " +
                              std::to_string(srcs[*ended].records_read()) + " records, but " + r.label(*going) + ": '" +
                              srcs[*going].name() + "' holds more; every stream gets one record per sample");
    if (const uint64_t k = std::min(n, r.to_skip()); k > 0) {
      for (auto& s : srcs) ZREC_RETURN_IF_ERROR(s.skip(k));
      r.skip(k);
      continue;
    }
    // batch < room() and batch_bytes < window_bytes: a flush follows when either is reached.
    const uint64_t fits = std::max<uint64_t>(1, (window_bytes - batch_bytes) / std::max<uint64_t>(1, sample_bytes));
    n = std::min({n, fits, r.room() - batch, RecordWindow::kMaxRecords - batch});
    for (size_t i = 0; i < srcs.size(); ++i) {
      NpyBatch& b = two.batch[two.cur][i];
      ZREC_RETURN_IF_ERROR(srcs[i].read(n, b.bytes));
      b.sizes.insert(b.sizes.end(), n, srcs[i].record_bytes());
      if (!r.schema(i).is_dense())
        for (uint64_t k = 0; k < n; ++k) b.dims.insert(b.dims.end(), srcs[i].dims(), srcs[i].dims() + r.schema(i).ndim);
    }
    r.count_input(n * sample_bytes);
    batch += n;
    batch_bytes += n * sample_bytes;
    if (batch >= r.room() || batch_bytes >= window_bytes || batch >= RecordWindow::kMaxRecords) {
      ZREC_RETURN_IF_ERROR(flush_batch(two, r, batch));
      batch_bytes = 0;
    }
  }
}

}  // namespace

Status append_npy_to_root(const std::string& root, const std::vector<std::string>& specs, bool split_axis0,
                          const AppendArgs& args, const GlobalOptions& global) {
  const std::vector<StreamPair> streams = parse_specs(specs);
  std::vector<std::string> names;
  for (const auto& s : streams) names.push_back(s.stream);
  InterruptScope interrupts;  // a --wait for the lock ends on SIGINT/SIGTERM
  NpyBatches batches;         // before r: the batch in flight lies in it until r is finished
  ZREC_ASSIGN_OR_RETURN(auto r, RootAppend::open("append-npy", root, args, global, names));
  const Control control = global.context(Work::kWrite).control;  // SIGINT/SIGTERM end a blocked read
  Status s = check_counts(streams, *r, split_axis0, control);
  std::vector<NpySource> srcs;
  srcs.reserve(streams.size());
  for (size_t i = 0; s.is_ok() && i < streams.size(); ++i) {
    auto in = io::InputStream::open(streams[i].source, control);
    if (!in.is_ok()) s = in.status();
    else srcs.emplace_back(std::move(*in), r->schema(i), split_axis0);
  }
  if (s.is_ok()) s = feed(srcs, *r, batches, r->batch_bytes(args.window_mib << 20));
  return r->finish(std::move(s));
}

}  // namespace zrec::cli
