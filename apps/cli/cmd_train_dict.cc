// zrec train-dict: train a zstd dictionary for zstd_dict stores from a sample of the
// exact logical records a store holds, or .npy files would append (Ragged: with the
// shape prefix). The sampling and training are in the core (include/zrec/dict.h);
// this file adds the .npy record source, which is an input format of the CLI.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/remote.h"
#include "zrec/store.h"
#include "zrec/transfer.h"

#include "cli/app/command.h"
#include "cli/formats/npy.h"
#include "cli/formats/printable.h"
#include "cli/options/json_option.h"
#include "cli/options/level_option.h"
#include "cli/options/option_values.h"
#include "cli/options/output_option.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/os/output_guard.h"
#include "cli/os/side_file.h"
#include "cli/report/console.h"
#include "cli/transfer_command.h"
#include "zrec_support/file.h"
#include "zrec_support/file_list.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

namespace {

struct TrainDictArgs {
  std::vector<std::string> sources;
  std::string files_from;
  bool null = false;  // --files-from's names are NUL-separated
  std::string output;
  // How .npy arrays become records, as append-npy would append them: --for-dense (axis 0
  // indexes records of one shape), --for-ragged (each array is one record, its shape
  // prefix included), --for-ragged --split-axis0 (each slice along axis 0 is one).
  bool for_dense = false, for_ragged = false, split_axis0 = false, force = false;
  // The old spellings, hidden: --dense, --ragged, --batch (warned about).
  bool old_dense = false, old_ragged = false, old_batch = false;
  bool json = false;
  int level = 0;
  TrainArgs train;
};

// The records .npy files would become (append-npy's rules): Dense, axis 0 of each array
// indexes records; Ragged, each array is one record (with --split-axis0, each slice
// along axis 0 is one).
class NpySource : public RecordSource {
 public:
  static Result<std::unique_ptr<NpySource>> open(const std::vector<std::string>& paths, bool ragged, bool split_axis0) {
    std::unique_ptr<NpySource> src(new NpySource());
    src->ragged_ = ragged;
    for (const auto& path : paths) ZREC_RETURN_IF_ERROR(src->add_file(path, split_axis0));
    return src;
  }

  uint64_t count() const override { return total_; }

  Status lengths(std::span<const uint64_t> ids, uint64_t* out) override {
    for (size_t k = 0; k < ids.size(); ++k) {
      const Array& a = arrays_[array_of(ids[k])];
      out[k] = 8 * a.dims.size() + a.record_bytes;  // dims: Ragged only
    }
    return Status::ok();
  }

  Status read(std::span<const uint64_t> ids, uint64_t max_bytes,
              const std::function<Status(size_t, const uint8_t*, size_t)>& fn) override {
    std::vector<uint8_t> buf;
    io::File file;
    for (size_t k = 0; k < ids.size(); ++k) {
      const Array& a = arrays_[array_of(ids[k])];
      if (file.path() != paths_[a.file]) {
        ZREC_ASSIGN_OR_RETURN(file, io::File::open(paths_[a.file], O_RDONLY));
      }
      const uint64_t prefix = ragged_ ? 8 * a.dims.size() : 0;
      const uint64_t n = std::min(prefix + a.record_bytes, max_bytes);
      buf.resize(n);
      if (prefix > 0) std::memcpy(buf.data(), a.dims.data(), std::min(prefix, n));  // LE host
      if (n > prefix)
        ZREC_RETURN_IF_ERROR(file.pread_exact(buf.data() + prefix, n - prefix,
                                              a.data_offset + (ids[k] - a.first_record) * a.record_bytes));
      ZREC_RETURN_IF_ERROR(fn(k, buf.data(), n));
    }
    return Status::ok();
  }

 private:
  struct Array {
    size_t file;
    uint64_t data_offset, first_record, records, record_bytes;
    std::vector<uint64_t> dims;  // Ragged: every record's dims
  };

  Status add_file(const std::string& path, bool split_axis0) {
    ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_RDONLY));
    ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
    paths_.push_back(path);
    uint64_t offset = 0;
    for (int index = 0; offset < size; ++index) {
      if (::lseek(f.fd(), static_cast<off_t>(offset), SEEK_SET) < 0)
        return io::errno_status(errno, "cannot seek in", path);
      io::InputStream in(f.fd(), path);
      ZREC_ASSIGN_OR_RETURN(auto header, read_npy_header(in));
      if (!header) break;
      const std::string where = "'" + path + "': array at byte " + std::to_string(offset);
      auto bad = [&](const std::string& rule) { return invalid_argument(where + ": " + rule); };
      const NpyHeader& h = *header;
      if (!dtype_) dtype_ = h.dtype;
      if (h.dtype != *dtype_)
        return bad("dtype '" + h.dtype.str() + "' differs from the first array's '" + dtype_->str() + "'");
      ZREC_RETURN_IF_ERROR(check_npy_array(h, where));
      Array a{paths_.size() - 1, offset + in.position(), total_, 0, 0, {}};
      ZREC_ASSIGN_OR_RETURN(NpyRecords split, npy_records(h, ragged_, split_axis0, where));
      a.records = split.records;
      a.record_bytes = split.record_bytes;
      const std::vector<uint64_t>& item = split.item;
      if (!ragged_) {
        if (!item_shape_) item_shape_ = item;
        if (item != *item_shape_)
          return bad("items of shape " + shape_to_string(item) + " differ from the first array's " +
                     shape_to_string(*item_shape_));
      } else {
        if (item.empty()) return bad("a Ragged record needs at least one dimension");
        if (!ndim_) ndim_ = item.size();
        if (item.size() != *ndim_)
          return bad("records of " + std::to_string(item.size()) + " dims differ from the first array's " +
                     std::to_string(*ndim_));
        a.dims = item;
      }
      if (a.data_offset + h.data_bytes > size) return bad("truncated: the file ends inside the array data");
      offset = a.data_offset + h.data_bytes;
      total_ += a.records;
      arrays_.push_back(std::move(a));
      (void)index;
    }
    return Status::ok();
  }

  size_t array_of(uint64_t id) const {
    auto it = std::upper_bound(arrays_.begin(), arrays_.end(), id,
                               [](uint64_t v, const Array& a) { return v < a.first_record; });
    return static_cast<size_t>(it - arrays_.begin()) - 1;
  }

  bool ragged_ = false;
  std::vector<std::string> paths_;
  std::vector<Array> arrays_;
  uint64_t total_ = 0;
  std::optional<DType> dtype_;
  std::optional<std::vector<uint64_t>> item_shape_;
  std::optional<size_t> ndim_;
};

// Writes the dictionary next to its final name, syncs, then renames it into place.
// stdout, and an existing file that is not a regular one (a FIFO, /dev/null), are
// written in place: renaming over them would replace the device itself.
Status write_dictionary(const std::string& path, const std::vector<uint8_t>& dict, bool force, const Context& ctx) {
  struct stat st;
  if (path == "-" || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
    ZREC_ASSIGN_OR_RETURN(Output out, Output::open(path, "-o", force));
    check_binary_output(out, force);
    ZREC_RETURN_IF_ERROR(out.write(dict.data(), dict.size()));
    return out.flush();
  }
  // Checked again: training may have taken minutes, and save_dictionary_file's rename
  // would replace a file that appeared meanwhile.
  ZREC_RETURN_IF_ERROR(refuse_existing_output(path, "-o", force));
  return save_dictionary_file(path, dict, ctx);
}

// The old spellings still work, for one release, with a warning naming the new one.
void apply_deprecated_spellings(TrainDictArgs& a) {
  const std::pair<bool TrainDictArgs::*, bool TrainDictArgs::*> renamed[] = {
      {&TrainDictArgs::old_dense, &TrainDictArgs::for_dense},
      {&TrainDictArgs::old_ragged, &TrainDictArgs::for_ragged},
      {&TrainDictArgs::old_batch, &TrainDictArgs::split_axis0}};
  const char* names[][2] = {{"--dense", "--for-dense"}, {"--ragged", "--for-ragged"}, {"--batch", "--split-axis0"}};
  for (size_t i = 0; i < 3; ++i) {
    if (!(a.*renamed[i].first)) continue;
    spdlog::warn("{} is deprecated and will be removed in the next release; use {}", names[i][0], names[i][1]);
    a.*renamed[i].second = true;
  }
}

Status run_train_dict(TrainDictArgs& a, const GlobalOptions& g) {
  apply_deprecated_spellings(a);
  std::vector<std::string> paths = a.sources;
  ZREC_RETURN_IF_ERROR(check_side_file(a.files_from, "--files-from", true));
  if (!a.files_from.empty())
    ZREC_RETURN_IF_ERROR(read_file_list(a.files_from, a.null ? ListSeparator::kNul : ListSeparator::kNewline, paths,
                                        g.transfer_context().control));
  if (paths.empty()) throw UsageError("no SOURCE: give a store, .npy files, or --files-from LIST");
  size_t dirs = 0;
  for (const auto& p : paths) {
    struct stat st;
    if (is_url(p)) {  // a remote store (zrec/remote.h)
      ++dirs;
      continue;
    }
    if (::stat(p.c_str(), &st) != 0) return io::errno_status(errno, "cannot open", p);
    dirs += S_ISDIR(st.st_mode) ? 1 : 0;
  }
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.output, "-o", paths));
  if (dirs != 0 && dirs != paths.size()) throw UsageError("give stores or .npy files as SOURCE, not both");
  const bool stores = dirs != 0;
  if (stores && (a.for_dense || a.for_ragged || a.split_axis0))
    throw UsageError("--for-dense, --for-ragged and --split-axis0 describe .npy inputs; a store has its own schema");
  if (a.for_dense && a.for_ragged) throw UsageError("give --for-dense or --for-ragged, not both");
  if (!stores && !a.for_dense && !a.for_ragged)
    throw UsageError(
        "say which store the .npy arrays are records for: --for-dense (axis 0 indexes records) or "
        "--for-ragged (one record per array; add --split-axis0 for one per slice along axis 0)");
  if (a.json && a.output == "-")
    throw UsageError("--json prints its object on stdout: give -o FILE for the dictionary");
  ZREC_ASSIGN_OR_RETURN(TrainOptions options, make_train_options(a.train, g, a.level));
  ZREC_RETURN_IF_ERROR(refuse_existing_output(a.output, "-o", a.force));  // usage errors first
  if (a.output == "-") ZREC_RETURN_IF_ERROR(check_stdout_open("the dictionary"));

  CommandReport report("train-dict", g, a.json);
  std::vector<std::unique_ptr<Store>> opened;
  std::vector<Store*> store_ptrs;
  std::unique_ptr<RecordSource> source;
  if (stores) {
    for (const auto& p : paths) {
      std::unique_ptr<Store> s;
      {
        InterruptScope during_lock_wait;  // --wait ends on SIGINT/SIGTERM: 130/143
        ZREC_ASSIGN_OR_RETURN(s, Store::open(p, {}, g.context(Work::kWrite)));
      }
      const std::string diff = schema_difference(opened.empty() ? s->schema() : opened[0]->schema(), s->schema());
      if (!diff.empty())
        return invalid_argument("schema of '" + p + "' differs from '" + opened[0]->path() + "': " + diff);
      store_ptrs.push_back(s.get());
      opened.push_back(std::move(s));
    }
    source = store_record_source(store_ptrs);
  } else {
    ZREC_ASSIGN_OR_RETURN(source, NpySource::open(paths, a.for_ragged, a.split_axis0));
  }
  const std::string what = paths.size() == 1 ? "'" + paths[0] + "'" : std::to_string(paths.size()) + " sources";
  TrainReport train;
  ZREC_ASSIGN_OR_RETURN(auto dict, train_with_report("train-dict", *source, options, what, g, &train));
  ZREC_RETURN_IF_ERROR(write_dictionary(a.output, dict, a.force, g.context(Work::kWrite)));
  report.set("output", a.output).set("sources", paths);
  training_facts(report, train, dict.size(), options.seed);
  return report.finish("wrote '" + printable(a.output) +
                       "': " + describe_training(train, dict.size(), options.seed, report.elapsed_s()));
}

}  // namespace

Command register_train_dict(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<TrainDictArgs>();
  CLI::App* cmd = root.add_subcommand("train-dict", "Train a zstd dictionary for zstd_dict stores");
  cmd->add_option("sources", args->sources, "Stores, or .npy files, to sample records from");
  auto* files_from =
      cmd->add_option("--files-from", args->files_from, "File (or -) listing more .npy files or stores, one per line");
  cmd->add_flag("-0,--null", args->null,
                "Names in --files-from are NUL-separated (find -print0), not newline-separated")
      ->needs(files_from);
  add_output_options(cmd, args->output, args->force, "Dictionary file to write",
                     "write the dictionary even to a terminal")
      ->required();
  add_train_options(cmd, args->train, true);
  add_level_option(cmd, args->level, "zstd level the dictionary is tuned for", "15, zstd_dict's");
  cmd->add_flag("--for-dense", args->for_dense,
                ".npy input holds records for a Dense store: axis 0 of each array indexes them");
  cmd->add_flag("--for-ragged", args->for_ragged,
                ".npy input holds records for a Ragged store: each array is one record (shape prefix included)");
  cmd->add_flag("--split-axis0", args->split_axis0,
                "With --for-ragged: each slice along axis 0 is one record, as append-npy --split-axis0 appends it");
  cmd->add_flag("--dense", args->old_dense, "Deprecated spelling of --for-dense")->group("");
  cmd->add_flag("--ragged", args->old_ragged, "Deprecated spelling of --for-ragged")->group("");
  cmd->add_flag("--batch", args->old_batch, "Deprecated spelling of --split-axis0")->group("");
  add_json_flag(cmd, args->json, "instead of the summary line", "needs -o FILE");
  return Command{cmd, [args, &global]() { return run_train_dict(*args, global); }, nullptr,
                 [args] { return args->output == "-"; }};
}

}  // namespace zrec::cli
