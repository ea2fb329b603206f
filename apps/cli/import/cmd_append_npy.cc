// zrec append-npy: append the arrays of .npy files (or a stream of .npy on stdin) as
// records, all or nothing (nothing is published unless every array was appended),
// or in checkpoints with --checkpoint-every (see append_session.h).
#include <sys/stat.h>

#include <algorithm>
#include <chrono>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "cli/app/command.h"
#include "cli/formats/npy.h"
#include "cli/import/append_command.h"
#include "cli/import/append_session.h"
#include "cli/import/npy_plan.h"
#include "cli/import/npy_root_append.h"
#include "cli/import/record_window.h"
#include "cli/options/option_values.h"
#include "cli/options/usage_error.h"
#include "cli/report/console.h"

namespace zrec::cli {

namespace {

// Streamed reads of array data ask for at least this much room.
constexpr uint64_t kArrayReadBytes = uint64_t{1} << 20;

struct AppendNpyArgs {
  std::string store;
  std::vector<std::string> inputs;
  std::vector<std::string> streams;  // --stream NAME=FILE: STORE is a root, every stream fed at once
  bool split_axis0 = false;          // --split-axis0: axis 0 of each array indexes records
  bool deprecated_batch = false;     // --batch: the old spelling of --split-axis0 (hidden)
  AppendArgs append;                 // --window-mib, --checkpoint-every, --skip-first
};

// What append-npy is to `zrec --help`, and its STORE operand.
constexpr AppendCommandForm kAppendNpy{.name = "append-npy",
                                       .about = "Append the arrays of .npy files (or stdin) as records",
                                       .store = "Store (or, with --stream, root) to append to"};

Status append_stream(io::InputStream& in, const AppendNpyArgs& a, AppendSession& session) {
  const Schema& schema = session.schema();
  for (uint64_t index = 0;; ++index) {
    const uint64_t start = in.position();
    ZREC_ASSIGN_OR_RETURN(auto header, read_npy_header(in));
    if (!header) {
      // An empty stdin appends nothing (a pipeline with nothing to say); a named file
      // without an array is a mistake worth reporting.
      if (index == 0 && in.name() != "-") return invalid_argument("'" + in.name() + "': no .npy array in the file");
      return Status::ok();
    }
    session.count_input(in.position() - start);  // the header; data counts as it is cut
    const std::string where = "'" + in.name() + "': array at byte " + std::to_string(start);
    ZREC_ASSIGN_OR_RETURN(ArrayPlan plan, plan_array(*header, schema, a.split_axis0, where));
    // The header's shape is only a claim until the data arrives: bytes are read into
    // streamed window space, which grows with what was read, never zero-filled to the
    // claim. A record within the window budget is asked for whole, so the window flushes
    // before it instead of moving a partial record; a larger one grows the window
    // geometrically as its bytes arrive.
    const uint64_t record_bytes = plan.record_bytes;
    const bool whole = record_bytes <= session.window_bytes();
    uint64_t record = 0;  // records of this array cut so far
    uint64_t have = 0;
    // Records to skip (--skip-first, or already in the store: --from-length) are passed
    // over without reading them, a seek in a file, unless they are present records this
    // run compares with the stored ones (by default, where the input is read anyway).
    if (const uint64_t skip = std::min(session.to_skip_unread(!in.seeks()), plan.records); skip > 0) {
      const uint64_t bytes = skip * record_bytes;
      ZREC_ASSIGN_OR_RETURN(uint64_t got, in.skip(bytes));
      session.count_input(got);
      if (got < bytes)
        return invalid_argument(where + ": truncated: the input ends inside record " +
                                std::to_string(got / record_bytes) + " of the array's " + std::to_string(plan.records) +
                                " (its data is " + std::to_string(header->data_bytes) +
                                " bytes; the input ends after " + std::to_string(got) + ")");
      session.skip_records(skip);
      record = skip;
      have = bytes;
    }
    while (have < header->data_bytes) {
      const uint64_t partial = session.pending().size();  // < record_bytes
      const uint64_t want = whole ? record_bytes - partial : std::min(record_bytes - partial, kArrayReadBytes);
      ZREC_ASSIGN_OR_RETURN(std::span<uint8_t> space, session.input_space(want));
      uint64_t take = std::min<uint64_t>(space.size(), header->data_bytes - have);
      if (whole && partial + take >= record_bytes) take = (partial + take) / record_bytes * record_bytes - partial;
      ZREC_ASSIGN_OR_RETURN(size_t got, in.read_some(space.data(), take));
      if (got == 0)
        return invalid_argument(where + ": truncated: the input ends inside record " + std::to_string(record) +
                                " of the array's " + std::to_string(plan.records) + " (its data is " +
                                std::to_string(header->data_bytes) + " bytes; the input ends after " +
                                std::to_string(have) + ")");
      session.input_written(got);
      have += got;
      for (; session.pending().size() >= record_bytes; ++record) {
        if (session.skip_record()) {  // present, read to be compared
          ZREC_RETURN_IF_ERROR(session.compare_skipped(session.pending().first(record_bytes), plan.dims.data(),
                                                       where + ": record " + std::to_string(record)));
          ZREC_RETURN_IF_ERROR(session.drop(record_bytes));
          continue;
        }
        ZREC_RETURN_IF_ERROR(session.cut(record_bytes, 0, plan.dims.data()));
      }
    }
  }
}

Status run_append_npy(AppendNpyArgs& a, const GlobalOptions& g) {
  if (a.deprecated_batch) {
    spdlog::warn("--batch is deprecated and will be removed in the next release; use --split-axis0");
    a.split_axis0 = true;
  }
  if (!a.streams.empty()) {
    if (!a.inputs.empty())
      throw UsageError("give the inputs of a root as --stream NAME=FILE only (not also as FILE arguments)");
    return append_npy_to_root(a.store, a.streams, a.split_axis0, a.append, g);
  }
  if (a.inputs.empty()) throw UsageError("no input: give .npy files (or -), or --stream NAME=FILE for a root");
  for (const auto& input : a.inputs)
    if (input == "-" && stdin_is_terminal())
      throw UsageError("refusing to read .npy data from a terminal (pipe it in, or name files)");
  ZREC_ASSIGN_OR_RETURN(auto session, AppendSession::open("append-npy", a.store, a.append, g));
  // The total is known when every input is a regular file: their sizes.
  uint64_t total_bytes = 0;
  for (const auto& input : a.inputs) {
    struct stat st {};
    if (input == "-" || ::stat(input.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      total_bytes = 0;
      break;
    }
    total_bytes += static_cast<uint64_t>(st.st_size);
  }
  session->progress().set_total_bytes(total_bytes);
  Status s;
  for (const auto& input : a.inputs) {
    auto in = io::InputStream::open(input, g.context(Work::kWrite).control);
    if (!in.is_ok()) {
      s = in.status();
      break;
    }
    s = append_stream(*in, a, *session);
    if (!s.is_ok()) break;
  }
  return session->finish(std::move(s));
}

// append-npy's own options, between STORE and the options every append takes.
void add_npy_options(CLI::App* cmd, AppendNpyArgs& a) {
  cmd->add_option("inputs", a.inputs, ".npy files, or - for a stream of .npy arrays on stdin");
  cmd->add_option("--stream", a.streams,
                  "NAME=FILE: STORE is a root; FILE's records go to its stream NAME, record i of every FILE "
                  "making sample i (name every stream of the root; - for one FILE at most)")
      ->type_name("NAME=FILE")
      ->allow_extra_args(false);
  cmd->add_flag("--split-axis0", a.split_axis0,
                "Axis 0 of each array indexes records: a Ragged store gets one record per slice "
                "(Dense stores always split axis 0)");
  cmd->add_flag("--batch", a.deprecated_batch, "Deprecated spelling of --split-axis0")->group("");
}

}  // namespace

Command register_append_npy(CLI::App& root, const GlobalOptions& global) {
  return register_append(root, global, kAppendNpy, add_npy_options, run_append_npy);
}

}  // namespace zrec::cli
