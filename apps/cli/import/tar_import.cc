// append-tar's run around the reading (see tar_import.h): the root and its streams
// opened and recovered, checkpoints, and the end of a run, committed or taken back.
#include "cli/import/tar_import.h"

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "zrec/dataset.h"

#include "cli/import/append_session.h"
#include "cli/import/tar_root.h"
#include "cli/import/tar_summary.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/report/codec_choice_report.h"
#include "cli/report/console.h"
#include "zrec_support/file.h"

namespace zrec::cli {

// "a, b, c", each name made printable.
std::string join_stream_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + printable(n);
  return out;
}

WriterOptions TarImport::writer_options() const {
  WriterOptions o;
  o.level = a_.append.level;
  o.checksum = a_.append.checksum;
  return o;
}

Status TarImport::check_schema(const TarStream& s) const {
  const Schema& schema = s.writer->schema();
  // A stream of neither bytes nor --parse numbers takes .npy members (checked each).
  if (!s.parse) return Status::ok();
  const bool one = opt_.parse_one.count(s.ext) > 0;
  const char* kind = *s.parse == NumberSyntax::kInts ? "int" : "float";
  Status dtype_ok = check_number_dtype(*s.parse, schema.dtype);
  if (one && (!schema.is_dense() || schema.ndim != 0 || !dtype_ok.is_ok()))
    return invalid_argument("stream '" + s.path + "' is " + schema.describe() + "; --parse " + s.ext + "=" + kind +
                            " needs a Dense scalar store of " +
                            (*s.parse == NumberSyntax::kInts ? "an integer" : "a float") + " dtype (--parse " + s.ext +
                            "=" + kind + "s reads a Ragged ndim-1 one)");
  const bool fits = schema.is_dense() ? schema.ndim == 0 : schema.ndim == 1;
  if (!fits || !dtype_ok.is_ok())
    return invalid_argument("stream '" + s.path + "' is " + schema.describe() + "; --parse " + s.ext +
                            " needs a Dense scalar or Ragged ndim-1 store of a " +
                            (*s.parse == NumberSyntax::kInts ? "integer" : "float") + " dtype");
  return Status::ok();
}

// An existing stream of numbers continues as the --parse that made it: a Dense scalar
// stream of an integer (float) dtype as EXT=int (float), a Ragged 1-D one as EXT=ints
// (floats). So a rerun, a resume or an --adopt (which adds no member at all: the publish
// step of a Slurm tar build) needs no --parse repeated; a --parse given is checked instead.
void TarImport::infer_parse(TarStream& s) {
  const Schema& schema = s.writer->schema();
  const DTypeKind kind = schema.dtype.kind;
  const bool ints = kind == DTypeKind::kInt || (kind == DTypeKind::kUInt && schema.dtype.str() != "|u1");
  const bool floats = kind == DTypeKind::kFloat;
  const bool scalar = schema.is_dense() && schema.ndim == 0;
  const bool ragged_1d = !schema.is_dense() && schema.ndim == 1;
  if (!(ints || floats) || !(scalar || ragged_1d)) return;
  s.parse = ints ? NumberSyntax::kInts : NumberSyntax::kFloats;
  opt_.parse[s.ext] = *s.parse;
  if (scalar) opt_.parse_one.insert(s.ext);
}

// A new stream: of bytes, of --parse numbers, or (made by its first member, an array)
// of the array's dtype, Ragged of its ndim or (--dense) Dense of its shape.
Status TarImport::open_stream(const std::string& ext, bool exists, const NpyHeader* first_array) {
  TarStream s;
  s.ext = ext;
  s.path = join_path(a_.root, ext);
  if (auto it = opt_.parse.find(ext); it != opt_.parse.end()) s.parse = it->second;
  if (!exists) {
    CreateOptions c = new_stream_options(a_, opt_, ext, first_array);
    ZREC_ASSIGN_OR_RETURN(s.writer, dataset_->stream(ext, c));
    unmade_.erase(ext);
    spdlog::info("created stream '{}': {}, codec {}", s.path, c.schema.describe(), to_string(c.codec));
  } else {
    s.writer = dataset_->find(ext);
  }
  if (exists && !s.parse) infer_parse(s);
  // Existing streams are all opened before the first sample, so this refuses before
  // anything is appended (as append-stream refuses --level on a raw store).
  if (a_.append.level != 0 && s.writer->codec() == Codec::kRaw && (exists || opt_.stream_codecs.count(ext) == 0))
    throw UsageError("--level is for zstd and zstd_dict; stream '" + s.path + "' is a raw store");
  ZREC_RETURN_IF_ERROR(check_schema(s));
  s.scalar = s.writer->schema().is_dense();
  const Schema& schema = s.writer->schema();
  s.arrays = !s.parse && (schema.is_dense() || schema.ndim != 1 || schema.dtype.str() != "|u1");
  s.keys = ext == kKeyStream;
  s.first_stored = s.writer->stored_bytes();
  s.window = std::make_unique<RecordWindow>(*s.writer, a_.append.window_mib << 20);
  // The codec is judged once, in the run that makes the stream (where --stream-codec can
  // still choose another); every later run or resume would only repeat it.
  WarningSink expansion_warn;
  if (!exists) expansion_warn = [this](const std::string& message) { warn(message); };
  s.expansion = std::make_unique<ExpansionCheck>(s.path, !exists, std::move(expansion_warn),
                                                 "--stream-codec " + ext + "=raw would store them smaller");
  s.window->set_expansion_check(s.expansion.get());
  index_[ext] = streams_.size();
  streams_.push_back(std::move(s));
  return Status::ok();
}

// The root, locked, and its streams' writers (tar_root.h).
Status TarImport::open_root() {
  ZREC_ASSIGN_OR_RETURN(dataset_, open_tar_root(a_.root, a_.adopt, writer_options(), g_.context(Work::kWrite)));
  return Status::ok();
}

// The streams the root holds, then the checks that may refuse the run (nothing changed
// yet), then the recovery to the committed count, then new streams.
Status TarImport::open_streams() {
  first_length_ = dataset_->committed_length();
  for (const auto& name : dataset_->stream_names()) ZREC_RETURN_IF_ERROR(open_stream(name, true));
  had_key_stream_ = find(kKeyStream) != nullptr;
  ZREC_RETURN_IF_ERROR(apply_resume_file(a_.append, first_length_, a_.root));
  ZREC_RETURN_IF_ERROR(check_start_length(a_.append, first_length_, "root '" + a_.root + "'", "samples"));
  to_skip_ = records_to_skip(a_.append, first_length_);
  if (!opt_.ext_streams.empty()) {
    for (const auto& s : streams_)
      if (!s.keys && std::find(opt_.ext_streams.begin(), opt_.ext_streams.end(), s.ext) == opt_.ext_streams.end())
        return invalid_argument("'" + a_.root + "' has a stream '" + printable(s.ext) +
                                "' that --ext leaves out; every stream of a root gets one record per sample "
                                "(select it too, or import into another root)");
    for (const auto& ext : opt_.ext_streams)
      if (find(ext) == nullptr && first_length_ > 0)
        return invalid_argument("root '" + a_.root + "' holds " + std::to_string(first_length_) +
                                " samples in streams " + stream_list() + "; a new stream '" + ext +
                                "' would not line up with them");
  }
  if (!opt_.ext_streams.empty() || first_length_ > 0)
    for (const auto& [ext, how] : opt_.parse) {
      const bool selected = find(ext) != nullptr ||
                            std::find(opt_.ext_streams.begin(), opt_.ext_streams.end(), ext) != opt_.ext_streams.end();
      if (!selected)
        throw UsageError("--parse " + ext + ": '" + ext + "' is not one of the streams (" + stream_list() + ")");
    }
  uint64_t lines = 0;
  if (!a_.keys.empty()) {
    ZREC_ASSIGN_OR_RETURN(keys_, KeysFile::open(a_.keys, a_.root));
    ZREC_ASSIGN_OR_RETURN(lines, keys_->count_lines());
    // A new root has no keys yet: lines already there are another dataset's, which
    // cutting back to the committed count would erase.
    if (dataset_->marked() && !a_.adopt && lines > 0)
      return invalid_argument("keys file '" + a_.keys + "' already holds " + std::to_string(lines) +
                              " lines, but root '" + a_.root +
                              "' is new: they are no keys of its samples (append-tar appends to the keys file "
                              "of a root's earlier runs; name a new file, or remove this one)");
    if (lines < first_length_)
      return invalid_argument("keys file '" + a_.keys + "' has " + std::to_string(lines) + " lines but root '" +
                              a_.root + "' holds " + std::to_string(first_length_) +
                              " samples (give the keys file of the earlier runs, or none)");
  }

  // Recovery: records past the committed count are those of a run that stopped before
  // committing the root.
  ZREC_ASSIGN_OR_RETURN(const std::vector<StreamCut> cuts, dataset_->recover());
  for (const auto& cut : cuts) {
    TarStream* s = find(cut.name);
    s->first_stored = s->writer->stored_bytes();
    spdlog::warn(
        "cut stream '{}' back from {} to {} records, the root's committed count (an append to the root was "
        "killed before its commit and left them)",
        printable(s->path), cut.from, first_length_);
  }
  if (keys_ && lines > first_length_) {
    ZREC_RETURN_IF_ERROR(keys_->cut_to_lines(first_length_));
    spdlog::warn("cut keys file '{}' back from {} to {} lines, the root's committed count", a_.keys, lines,
                 first_length_);
  }

  // A selected stream of numbers (--parse) is made now; any other waits for its first
  // member, which may be an array (unmade_).
  for (const auto& ext : opt_.ext_streams)
    if (find(ext) == nullptr) {
      if (opt_.parse.count(ext) > 0) {
        ZREC_RETURN_IF_ERROR(open_stream(ext, false));
      } else {
        unmade_.insert(ext);
      }
    }
  // --keys-stream: the keys inside the root. Once a root has the stream, every run
  // writes it (it is one of the streams), whether or not the option is given again.
  if (a_.keys_stream && find(kKeyStream) == nullptr) ZREC_RETURN_IF_ERROR(open_stream(kKeyStream, false));
  // Without --ext, empty streams (a root that holds no sample yet) do not fix the set:
  // the first sample still adds the extensions it brings.
  selection_fixed_ = !opt_.ext_streams.empty() || first_length_ > 0;
  if (selection_fixed_) check_stream_dicts();
  return Status::ok();
}

// Once the streams are known (from --ext, the root, or the first sample), a --stream-dict
// for none of them is a mistyped name (text= for txt) that would leave the stream meant
// without its dictionary, silently: a usage error, before any sample is appended.
void TarImport::check_stream_dicts() const {
  for (const auto& [name, spec] : opt_.stream_dict_specs)
    if (index_.count(name) == 0 && unmade_.count(name) == 0)
      throw UsageError("--stream-dict '" + printable(spec) + "': '" + printable(name) +
                       "' is not one of the streams (" + stream_list() + ")");
  // --stream-codec likewise; and a stream that exists already keeps its codec: a rerun
  // with the same options goes on, another codec asked of it is refused, not ignored.
  for (const auto& [name, spec] : opt_.stream_codec_specs) {
    if (unmade_.count(name) > 0) continue;  // made with it by its first member
    const auto at = index_.find(name);
    if (at == index_.end())
      throw UsageError("--stream-codec '" + printable(spec) + "': '" + printable(name) +
                       "' is not one of the streams (" + stream_list() + ")");
    // STREAM=auto takes the stream as it is: auto chose its codec when it was made.
    const Codec has = streams_[at->second].writer->codec();
    const NewCodec& asked = opt_.stream_codecs.at(name);
    if (!asked.automatic && has != asked.codec)
      throw UsageError("--stream-codec '" + printable(spec) + "': the stream '" + printable(streams_[at->second].path) +
                       "' exists with codec " + to_string(has) + "; a stream keeps the codec it was made with");
  }
}

// The root, its lock and its streams' (recovered to the committed count), and the keys
// file, before any input.
Status TarImport::prepare() {
  ZREC_RETURN_IF_ERROR(parse_tar_stream_options(a_, opt_));
  ZREC_RETURN_IF_ERROR(open_root());
  return open_streams();
}

// A run that failed or stopped: every stream's unpublished records go; before its first
// publication also what it created (the dataset's streams, marker and directory, and
// the keys file).
void TarImport::take_back() {
  wait_windows();
  if (keys_) {
    keys_->rollback();
    if (!dataset_ || !dataset_->published()) keys_->remove_created();
  }
  if (!dataset_) return;
  std::vector<std::string> warnings;
  dataset_->abort(&warnings);
  for (const auto& w : warnings) spdlog::warn("{}", w);
}

// A sample skipped as already present (--from-length) must be the one the root holds
// there: with --keys, its key is compared with the keys file's line for it. A rerun over
// another input (a glob regenerated between a kill and the requeue) used to append that
// input's tail after the first one's head, exit 0.
Status TarImport::check_present_key() {
  const uint64_t at = *a_.append.from_length + (skipped_ - a_.append.skip_first);
  ZREC_ASSIGN_OR_RETURN(std::string found, keys_->differs_at(at, sample_.key()));
  if (found.empty()) return Status::ok();
  return invalid_argument("sample '" + printable(sample_.key()) + "' is not sample " + std::to_string(at) +
                          " of root '" + a_.root + "': line " + std::to_string(at + 1) + " of keys file '" + a_.keys +
                          "' is '" + printable(found) +
                          "' (this input is not the one the earlier runs read from --from-length " +
                          std::to_string(*a_.append.from_length) + "); nothing was appended");
}

// The same check against the root's own keys (--keys-stream): record `at` of its stream
// __key__ must be this sample's key. A root built with --keys-stream used to append
// another input's tail after "skipping N already present".
Status TarImport::check_present_key_stream() {
  const uint64_t at = *a_.append.from_length + (skipped_ - a_.append.skip_first);
  const TarStream* s = find(kKeyStream);
  if (!key_stream_check_) {
    ZREC_ASSIGN_OR_RETURN(key_stream_check_,
                          PresentCheck::open(s->path, *a_.append.from_length, first_length_ - *a_.append.from_length));
  }
  ZREC_ASSIGN_OR_RETURN(const std::span<const uint8_t> stored, key_stream_check_->payload(at));
  const std::string found(stored.begin(), stored.end());
  if (found == sample_.key()) return Status::ok();
  return invalid_argument("sample '" + printable(sample_.key()) + "' is not sample " + std::to_string(at) +
                          " of root '" + a_.root + "': record " + std::to_string(at) + " of its stream '" + kKeyStream +
                          "' is '" + printable(found) +
                          "' (this input is not the one the earlier runs read from --from-length " +
                          std::to_string(*a_.append.from_length) + "); nothing was appended");
}

// Two phases: every stream is published, then the root is committed. A kill between
// (or between two streams' publications) leaves streams past the committed count:
// open_streams() of the next run cuts them back to it. The keys reach the disk before
// either phase, so they are at least as many as the committed samples.
Status TarImport::checkpoint() {
  // flush() waits for each window's batch in flight: every record is in its writer.
  for (auto& s : streams_) ZREC_RETURN_IF_ERROR(s.window->flush());
  if (interrupted()) return cancelled("interrupted");
  if (keys_) ZREC_RETURN_IF_ERROR(keys_->prepare());
  ZREC_RETURN_IF_ERROR(dataset_->publish());
  if (keys_) keys_->commit();
  since_checkpoint_ = 0;
  spdlog::debug("checkpoint: root '{}' committed {} samples", a_.root, first_length_ + added_);
  return Status::ok();
}

Status TarImport::finish(Status s) {
  finished_ = true;
  if (s.is_ok() && interrupted()) s = cancelled("interrupted");
  // --from-length said the root holds samples of this input that it does not have.
  if (s.is_ok() && a_.append.from_length && skipped_ < to_skip_)
    s = input_too_short(a_.append, first_length_, skipped_, "root '" + a_.root + "'", "samples");
  if (s.is_ok()) s = checkpoint();
  if (s.is_ok()) s = dataset_->close();  // publishes nothing more: closes the writers
  if (meter_) meter_->finish();
  if (s.is_ok()) {
    uint64_t stored = 0;
    for (const auto& st : streams_) stored += st.writer->stored_bytes() - st.first_stored;
    std::vector<std::string> exts;
    std::vector<const CodecChoice*> choices;
    for (const auto& st : streams_) {
      exts.push_back(st.ext);
      choices.push_back(st.writer->codec_choice());
    }
    report_stream_choices(outcome_, a_.root, exts, choices);
    const std::string line = tar_import_summary(outcome_, a_.root, exts, stream_list(),
                                                {.added = added_,
                                                 .skipped = skipped_,
                                                 .skip_first = a_.append.skip_first,
                                                 .incomplete = incomplete_,
                                                 .ignored = ignored_,
                                                 .bytes_in = bytes_in_,
                                                 .stored = stored,
                                                 .first_length = first_length_});
    streams_.clear();
    return outcome_.finish(line);
  }
  const uint64_t held = holds();
  const bool read_root = dataset_ != nullptr;  // the root was locked and read: what it holds is known
  take_back();
  if (!read_root) return s;
  return run_failed(s, a_.append, "root '" + a_.root + "'", "samples", first_length_, held);
}

}  // namespace zrec::cli
