// zrec append-tar: WebDataset tar shards into aligned named streams. Members are
// grouped into samples as WebDataset does (key: the path up to the first dot of the
// basename; extension: the rest; consecutive members with one key form a sample), and
// each selected extension goes to the store ROOT/<ext>, one record per sample, so
// record i of every stream belongs to sample i. A member "KEY.STREAM.npy" holds an array:
// its data is a record of the stream STREAM (npy_member.h), as cat --format tar writes
// the streams that are neither bytes nor --parse numbers.
//
// The root is marked and committed (zrec/dataset.h, docs/format.md §12): ROOT/zrec-root
// names the streams and the committed sample count. At the end and at each
// --checkpoint-every every stream is published, then the root is committed. A kill
// between the two phases leaves streams holding records past the committed count; the
// next run cuts them back to that count, and only in a marked root: a directory without
// the marker is left alone unless --adopt makes it a root.
//
// Lock first, then read: the root's lock (the marker's), then every stream's writer
// lock in name order (one global order, so two runs never deadlock), all honouring
// --wait, before any length is read, any stream cut back or the keys file touched.
//
// A run that fails before its first publication takes back what it created: the
// streams (empty), the marker, the directory.
//
// Memory: each stream has its own window (--window-mib each). A member's bytes are
// read from libarchive straight into its stream's window as pending bytes and cut into
// a record when the sample is known complete, so a huge member costs its own size (up
// to twice that while the window doubles to it: its header's size is a claim, never
// allocated on trust) and millions of tiny members cost only the window. A --parse member's text is parsed
// as it is read, a chunk at a time, into the window: its text is never held whole, and
// its numbers (up to 4x the text: "1 " is 8 bytes of <i8) stop at the window's size
// (--window-mib raises it), so a record of numbers never grows the window.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/file.h"
#include "zrec/limits.h"
#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "cli/app/command.h"
#include "cli/app/usage.h"
#include "cli/formats/path_name.h"
#include "cli/formats/printable.h"
#include "cli/formats/text_numbers.h"
#include "cli/import/append_session.h"
#include "cli/import/expansion_check.h"
#include "cli/import/keys_file.h"
#include "cli/import/new_store_options.h"
#include "cli/import/npy_member.h"
#include "cli/import/present_check.h"
#include "cli/import/tar_reader.h"
#include "cli/options/option_values.h"
#include "cli/options/stream_codec_option.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"

namespace zrec::cli {

namespace {

struct AppendTarArgs {
  std::string root;
  std::vector<std::string> tars;
  std::vector<std::string> ext;
  std::vector<std::string> parse;
  std::vector<std::string> dense;  // --dense STREAM: a new stream of .npy members is Dense
  bool skip_incomplete = false;
  bool adopt = false;
  std::string keys;
  bool keys_stream = false;                // --keys-stream: the keys as the root's stream __key__
  std::vector<std::string> stream_dicts;   // --stream-dict STREAM=FILE: a new stream's own dictionary
  std::vector<std::string> stream_codecs;  // --stream-codec STREAM=CODEC: a new stream's own codec
  NewStoreArgs create;
  AppendArgs append;
};

// A |u1 record's payload is at most 2^31 - 1 bytes minus its 8-byte shape prefix.
// Bytes asked of the window per read of a member's data.
constexpr uint64_t kReadChunk = uint64_t{1} << 20;
// --parse: the longest number a member's text may hold (the text is parsed a chunk at
// a time, and a number cut by a chunk's end waits for the rest).
constexpr size_t kMaxNumberText = 4096;
// The separators of numbers in text (as count_number_tokens).
constexpr const char* kNumberSeparators = " \t\r\n\v\f";

// WebDataset's split of a member path: "a/0001.seg.png" -> key "a/0001", ext "seg.png".
// A basename without a dot has no extension (such members are ignored).
void split_member_path(const std::string& path, std::string& key, std::string& ext) {
  const size_t slash = path.rfind('/');
  const size_t base = slash == std::string::npos ? 0 : slash + 1;
  const size_t dot = path.find('.', base);
  if (dot == std::string::npos) {
    key = path;
    ext.clear();
    return;
  }
  key = path.substr(0, dot);
  ext = path.substr(dot + 1);
}

// "a, b, c", each name made printable.
std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + printable(n);
  return out;
}

// One named stream: ROOT/<ext>, its writer and window, and the current sample's member.
struct Stream {
  std::string ext, path;
  std::optional<NumberSyntax> parse;
  StoreWriter* writer = nullptr;              // the dataset's
  std::unique_ptr<ExpansionCheck> expansion;  // the window's codec check (outlives it)
  std::unique_ptr<RecordWindow> window;       // destroyed first: it waits for its batch in flight
  uint64_t first_stored = 0;
  bool scalar = false;  // a Dense scalar store: one number per member
  bool keys = false;    // the __key__ stream: each sample's key, not a member
  bool arrays = false;  // neither bytes nor --parse numbers: its members must be .npy arrays
  // The current sample's member of this extension.
  bool has_member = false;
  bool data_skipped = false;  // the member belongs to a sample being skipped: its data was not read
  std::string member_path;
  bool npy = false;                // the member is "KEY.<ext>.npy": an array, its data the record
  std::vector<uint64_t> npy_dims;  // its shape (a Ragged record's dims)
  uint64_t member_bytes = 0;       // read from the tar
  uint64_t pending_bytes = 0;      // in the window for its record: the bytes, or (--parse) the numbers parsed
  uint64_t numbers = 0;            // --parse: numbers parsed
  std::string text;                // --parse: text read but not parsed yet (a number cut by the chunk's end)
  Status parse_problem;            // --parse: why the member's text is no record
};

class TarImport {
 public:
  // A copy of the arguments: --resume-file sets its --from-length once the root is locked.
  TarImport(const AppendTarArgs& a, const GlobalOptions& g) : a_(a), g_(g) {}
  // A run that ends by an exception (a usage error found late) aborts and takes back
  // what it created, as finish() does for an error.
  ~TarImport() {
    if (finished_) return;
    take_back();
  }

  Status prepare();
  Status run();
  Status finish(Status s);

 private:
  Status parse_options();
  Status open_root();
  Status unmarked(const std::vector<std::string>& stores) const;
  Status open_streams();
  void check_stream_dicts() const;
  void parse_stream_codecs();
  void take_back();
  WriterOptions writer_options() const;
  Status open_stream(const std::string& ext, bool exists, const NpyHeader* first_array = nullptr);
  Status check_schema(const Stream& s) const;
  void infer_parse(Stream& s);
  Status check_present_key();
  Status check_present_key_stream();
  Status read_member(Stream& s, const TarMember& m, const std::optional<NpyMember>& array);
  Status parse_text(Stream& s, bool member_end);
  Status close_sample();
  Status checkpoint();
  // Waits for each window's batch in flight (if any): the write threads are done with
  // the writers after this, and the dataset may abort them.
  void wait_windows() {
    for (auto& s : streams_)
      if (s.window) (void)s.window->wait();
  }
  void drop_sample();
  Stream* find(const std::string& ext) {
    auto it = index_.find(ext);
    return it == index_.end() ? nullptr : &streams_[it->second];
  }
  // Samples the root holds: its committed count.
  uint64_t holds() const { return dataset_ ? dataset_->committed_length() : first_length_; }
  std::string stream_list() const {
    std::vector<std::string> names;
    for (const auto& s : streams_) names.push_back(s.ext);
    return join_names(names);
  }
  // The streams made of members: all but __key__, which comes from the sample's key.
  std::string member_stream_list() const {
    std::vector<std::string> names;
    for (const auto& s : streams_)
      if (!s.keys) names.push_back(s.ext);
    return join_names(names);
  }
  void warn(const std::string& message) {
    if (meter_) meter_->print_above([&] { spdlog::warn("{}", message); });
    else spdlog::warn("{}", message);
  }
  // Progress: samples, and the tar bytes read of their total when every input is a
  // regular file (a percentage and an ETA), else the members' bytes.
  void report() {
    if (meter_) meter_->update(samples_seen_, input_total_ > 0 && reader_ ? reader_->input_bytes() : bytes_in_);
  }

  AppendTarArgs a_;
  const GlobalOptions& g_;
  std::map<std::string, NumberSyntax> parse_;
  std::vector<std::string> ext_streams_;              // --ext: the streams selected, in its order
  std::map<std::string, std::string> stream_of_ext_;  // --ext: a member's extension -> its stream
  std::map<std::string, std::string> alias_words_;    // --ext: a stream of alternatives -> ".png, .jpg or .jpeg"
  std::set<std::string> parse_one_;  // --parse EXT=int|float: one number per member, a Dense scalar stream
  std::set<std::string> dense_;      // --dense: new streams of .npy members made Dense
  CreateOptions create_;
  // --stream-dict: new streams with a dictionary of their own (zstd_dict), by name.
  std::map<std::string, std::vector<uint8_t>> stream_dicts_;
  std::map<std::string, std::string> stream_dict_specs_;  // by stream: the STREAM=FILE given, for messages
  // --stream-codec: new streams with a codec of their own, by name, and the STREAM=CODEC given.
  std::map<std::string, Codec> stream_codecs_;
  std::map<std::string, std::string> stream_codec_specs_;
  // The root's lock, its streams' writers and its commit protocol (zrec/dataset.h);
  // declared before streams_, whose windows use the writers and go first.
  std::unique_ptr<DatasetWriter> dataset_;
  std::vector<Stream> streams_;  // index_ order: as created or found
  std::map<std::string, size_t> index_;
  bool selection_fixed_ = false;
  bool finished_ = false;
  std::unique_ptr<KeysFile> keys_;
  // The committed __key__ records a rerun's skipped samples are compared with: opened at
  // the first sample found present, when the root has the stream.
  std::unique_ptr<PresentCheck> key_stream_check_;
  bool had_key_stream_ = false;  // the root held the stream __key__ when the run began
  std::unique_ptr<ProgressMeter> meter_;
  CommandReport outcome_{"append-tar", g_, a_.append.json};  // its clock starts here

  uint64_t first_length_ = 0;  // samples the root held (committed) when its lock was taken
  uint64_t to_skip_ = 0;       // complete samples to skip: --skip-first, then those already present
  // The current sample.
  bool in_sample_ = false;
  std::string key_;
  std::vector<std::string> members_;  // every member of the sample with an extension, selected or not
  // Counts.
  uint64_t samples_seen_ = 0, added_ = 0, skipped_ = 0, incomplete_ = 0, ignored_ = 0, since_checkpoint_ = 0;
  uint64_t bytes_in_ = 0;
  const TarReader* reader_ = nullptr;  // run()'s, for report()
  uint64_t input_total_ = 0;           // the tars' sizes, when all are regular files
};

Status TarImport::parse_options() {
  for (const auto& spec : a_.parse) {
    const size_t eq = spec.find('=');
    const std::string ext = eq == std::string::npos ? "" : spec.substr(0, eq);
    const std::string how = eq == std::string::npos ? "" : spec.substr(eq + 1);
    if (ext.empty() || (how != "ints" && how != "floats" && how != "int" && how != "float"))
      throw UsageError("--parse '" + spec +
                       "': expected EXT=int or EXT=float (one number per member, e.g. --parse cls=int), or EXT=ints "
                       "or EXT=floats (any count)");
    if (const std::string why = stream_name_problem(ext); !why.empty())
      throw UsageError("--parse '" + spec + "': '" + ext + "' cannot name a stream: " + why + " (" + kStreamNameRule +
                       ")");
    parse_[ext] = how == "ints" || how == "int" ? NumberSyntax::kInts : NumberSyntax::kFloats;
    if (how == "int" || how == "float") parse_one_.insert(ext);
    else parse_one_.erase(ext);
  }
  for (const auto& name : a_.dense) {
    if (const std::string why = stream_name_problem(name); !why.empty())
      throw UsageError("--dense '" + printable(name) + "' cannot name a stream: " + why + " (" + kStreamNameRule + ")");
    dense_.insert(name);
  }
  // --ext: a stream per item; "png;jpg;jpeg=image" (WebDataset's ';' for alternatives)
  // puts members of any of those extensions into the stream "image" ("png;jpg": "png").
  for (const auto& spec : a_.ext) {
    const size_t eq = spec.find('=');
    const std::string alternatives = spec.substr(0, eq);
    std::vector<std::string> alts;
    for (size_t at = 0; at <= alternatives.size();) {
      const size_t semi = std::min(alternatives.find(';', at), alternatives.size());
      alts.push_back(alternatives.substr(at, semi - at));
      at = semi + 1;
    }
    const std::string name = eq == std::string::npos ? alts.front() : spec.substr(eq + 1);
    for (const std::string& word : alts)
      if (const std::string why = stream_name_problem(word); !why.empty())
        throw UsageError("--ext '" + spec + "': the extension '" + word + "' cannot name a stream: " + why + " (" +
                         kStreamNameRule + ")");
    if (const std::string why = stream_name_problem(name); !why.empty())
      throw UsageError("--ext '" + spec + "': '" + name + "' cannot name a stream: " + why + " (" + kStreamNameRule +
                       ")");
    if (std::find(ext_streams_.begin(), ext_streams_.end(), name) != ext_streams_.end())
      throw UsageError("--ext '" + spec + "': the stream '" + name + "' is named twice");
    ext_streams_.push_back(name);
    for (const std::string& word : alts) {
      if (auto it = stream_of_ext_.find(word); it != stream_of_ext_.end())
        throw UsageError("--ext '" + spec + "': the extension '" + word + "' already goes to the stream '" +
                         it->second + "'");
      stream_of_ext_[word] = name;
    }
    if (alts.size() > 1 || alts.front() != name) {
      std::string words;
      for (size_t i = 0; i < alts.size(); ++i)
        words += (i == 0 ? "." : i + 1 == alts.size() ? " or ." : ", .") + alts[i];
      alias_words_[name] = words;
    }
  }
  ZREC_ASSIGN_OR_RETURN(create_, new_store_options(a_.create, a_.append.checksum.value_or(false), a_.append.level));
  for (const std::string& spec : a_.stream_dicts) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--stream-dict '" + printable(spec) +
                       "': expected STREAM=FILE, e.g. --stream-dict txt=txt.dict");
    const std::string name = spec.substr(0, eq);
    if (const std::string why = stream_name_problem(name); !why.empty())
      throw UsageError("--stream-dict '" + printable(spec) + "': '" + printable(name) +
                       "' cannot name a stream: " + why);
    // A second FILE for the same stream is a mistake in a script, not an override.
    if (const auto first = stream_dict_specs_.find(name); first != stream_dict_specs_.end())
      throw UsageError("--stream-dict '" + printable(spec) + "': the stream '" + printable(name) +
                       "' has a dictionary already (--stream-dict '" + printable(first->second) +
                       "'); give one FILE per STREAM");
    stream_dict_specs_[name] = spec;
    ZREC_ASSIGN_OR_RETURN(stream_dicts_[name], read_dictionary_file(spec.substr(eq + 1), "--stream-dict"));
  }
  parse_stream_codecs();
  return Status::ok();
}

// --stream-codec STREAM=CODEC, checked as --stream-dict is: one CODEC per STREAM, a
// name that can be a stream's. zstd_dict comes with its dictionary: --stream-dict.
void TarImport::parse_stream_codecs() {
  StreamCodecs parsed = cli::parse_stream_codecs(a_.stream_codecs, [](const std::string& name) {
    return "a zstd_dict stream needs its dictionary: give --stream-dict " + printable(name) + "=FILE";
  });
  for (const auto& [name, codec] : parsed.codecs) {
    const std::string& spec = parsed.specs.at(name);
    if (stream_dict_specs_.count(name) > 0)
      throw UsageError("--stream-codec '" + printable(spec) + "': the stream '" + printable(name) +
                       "' has a dictionary (--stream-dict '" + printable(stream_dict_specs_.at(name)) +
                       "'), which makes it zstd_dict");
    if (codec == Codec::kRaw && a_.append.checksum.value_or(false))
      throw UsageError("--stream-codec '" + printable(spec) + "': --checksum is for zstd and zstd_dict, not raw");
  }
  stream_codecs_ = std::move(parsed.codecs);
  stream_codec_specs_ = std::move(parsed.specs);
}

WriterOptions TarImport::writer_options() const {
  WriterOptions o;
  o.lanes = g_.lanes(Work::kWrite);
  o.wait = g_.lock_wait();
  o.level = a_.append.level;
  o.checksum = a_.append.checksum;
  return o;
}

Status TarImport::check_schema(const Stream& s) const {
  const Schema& schema = s.writer->schema();
  // A stream of neither bytes nor --parse numbers takes .npy members (checked each).
  if (!s.parse) return Status::ok();
  const bool one = parse_one_.count(s.ext) > 0;
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
void TarImport::infer_parse(Stream& s) {
  const Schema& schema = s.writer->schema();
  const DTypeKind kind = schema.dtype.kind;
  const bool ints = kind == DTypeKind::kInt || (kind == DTypeKind::kUInt && schema.dtype.str() != "|u1");
  const bool floats = kind == DTypeKind::kFloat;
  const bool scalar = schema.is_dense() && schema.ndim == 0;
  const bool ragged_1d = !schema.is_dense() && schema.ndim == 1;
  if (!(ints || floats) || !(scalar || ragged_1d)) return;
  s.parse = ints ? NumberSyntax::kInts : NumberSyntax::kFloats;
  parse_[s.ext] = *s.parse;
  if (scalar) parse_one_.insert(s.ext);
}

// A new stream: of bytes, of --parse numbers, or (made by its first member, an array)
// of the array's dtype, Ragged of its ndim or (--dense) Dense of its shape.
Status TarImport::open_stream(const std::string& ext, bool exists, const NpyHeader* first_array) {
  Stream s;
  s.ext = ext;
  s.path = join_path(a_.root, ext);
  if (auto it = parse_.find(ext); it != parse_.end()) s.parse = it->second;
  if (!exists) {
    CreateOptions c = create_;
    c.schema.ndim = 1;
    c.schema.dtype = parse_dtype(!s.parse ? "|u1" : *s.parse == NumberSyntax::kInts ? "<i8" : "<f8").value();
    if (parse_one_.count(ext) > 0) {  // one number per member: a Dense scalar stream
      c.schema.ndim = 0;
      c.schema.item_shape = std::vector<uint64_t>{};
    }
    if (first_array != nullptr && !s.parse) c.schema = npy_stream_schema(*first_array, dense_.count(ext) > 0);
    set_new_store_codec(c, a_.create, a_.append.checksum.value_or(false), a_.append.level);
    if (auto own = stream_dicts_.find(ext); own != stream_dicts_.end()) {  // --stream-dict
      c.codec = Codec::kZstdDict;
      c.dictionary = own->second;
    } else if (auto codec = stream_codecs_.find(ext); codec != stream_codecs_.end()) {  // --stream-codec
      c.codec = codec->second;
      c.dictionary.clear();
      c.checksum = c.checksum && c.codec != Codec::kRaw;
    } else if (ext == kKeyStream && a_.create.codec.empty()) {  // keys are a few bytes: a zstd frame would grow them
      c.codec = Codec::kRaw;
      c.dictionary.clear();
      c.checksum = false;
    }
    ZREC_ASSIGN_OR_RETURN(s.writer, dataset_->stream(ext, c));
    spdlog::info("created stream '{}': {}, codec {}", s.path, c.schema.describe(), to_string(c.codec));
  } else {
    s.writer = dataset_->find(ext);
  }
  if (exists && !s.parse) infer_parse(s);
  // Existing streams are all opened before the first sample, so this refuses before
  // anything is appended (as append-stream refuses --level on a raw store).
  if (a_.append.level != 0 && s.writer->codec() == Codec::kRaw && (exists || stream_codecs_.count(ext) == 0))
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

// A directory of stores without a marker: append-tar changes nothing in it.
Status TarImport::unmarked(const std::vector<std::string>& stores) const {
  std::string list, lengths;
  std::optional<uint64_t> common;
  bool agree = true;
  for (const auto& name : stores) {
    list += (list.empty() ? "" : ", ") + printable(name);
    auto store = Store::open(join_path(a_.root, name), {.snapshot_if_busy = true});
    if (!store.is_ok()) continue;
    const uint64_t n = store.value()->length();
    lengths += (lengths.empty() ? "" : ", ") + printable(name) + " " + std::to_string(n);
    if (common && *common != n) agree = false;
    common = n;
  }
  return invalid_argument(
      "'" + a_.root + "' holds stores (" + list + ") but no " + kRootMarkerFile +
      " marker: it is not a root that append-tar built, and append-tar changes nothing in it. To "
      "make these stores its streams (record i of each is sample i), run again with --adopt, "
      "which needs their lengths to agree (" +
      (agree && common ? "they do: " + std::to_string(*common) + " records each" : "now: " + lengths) + ")");
}

// The root, locked, and its streams' writers (zrec/dataset.h), or the refusal of a path
// that is no root append-tar may write: a store, or stores without a marker (unless
// --adopt). These two are told here first, in append-tar's words.
Status TarImport::open_root() {
  if (is_store_dir(a_.root))
    return invalid_argument("'" + a_.root +
                            "' is a store; append-tar appends to a directory of named streams "
                            "(ROOT/<ext>), e.g. a new directory");
  if (!a_.adopt) {
    const auto marker = read_root_marker(a_.root);
    if (marker.is_ok() && !marker.value()) {
      const std::vector<std::string> stores = child_stores(a_.root);
      if (!stores.empty()) return unmarked(stores);
    }
  }
  ZREC_ASSIGN_OR_RETURN(
      dataset_,
      DatasetWriter::open(a_.root, {.writer = writer_options(), .adopt = a_.adopt, .warn = log_core_warning}));
  if (a_.adopt && dataset_->marked() && !dataset_->stream_names().empty())
    spdlog::info("adopted '{}' as a root of {} streams of {} samples", a_.root, dataset_->stream_names().size(),
                 dataset_->committed_length());
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
  if (!ext_streams_.empty()) {
    for (const auto& s : streams_)
      if (!s.keys && std::find(ext_streams_.begin(), ext_streams_.end(), s.ext) == ext_streams_.end())
        return invalid_argument("'" + a_.root + "' has a stream '" + printable(s.ext) +
                                "' that --ext leaves out; every stream of a root gets one record per sample "
                                "(select it too, or import into another root)");
    for (const auto& ext : ext_streams_)
      if (find(ext) == nullptr && first_length_ > 0)
        return invalid_argument("root '" + a_.root + "' holds " + std::to_string(first_length_) +
                                " samples in streams " + stream_list() + "; a new stream '" + ext +
                                "' would not line up with them");
  }
  if (!ext_streams_.empty() || first_length_ > 0)
    for (const auto& [ext, how] : parse_) {
      const bool selected =
          find(ext) != nullptr || std::find(ext_streams_.begin(), ext_streams_.end(), ext) != ext_streams_.end();
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
    Stream* s = find(cut.name);
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

  for (const auto& ext : ext_streams_)
    if (find(ext) == nullptr) ZREC_RETURN_IF_ERROR(open_stream(ext, false));
  // --keys-stream: the keys inside the root. Once a root has the stream, every run
  // writes it (it is one of the streams), whether or not the option is given again.
  if (a_.keys_stream && find(kKeyStream) == nullptr) ZREC_RETURN_IF_ERROR(open_stream(kKeyStream, false));
  // Without --ext, empty streams (a root that holds no sample yet) do not fix the set:
  // the first sample still adds the extensions it brings.
  selection_fixed_ = !ext_streams_.empty() || first_length_ > 0;
  if (selection_fixed_) check_stream_dicts();
  return Status::ok();
}

// Once the streams are known (from --ext, the root, or the first sample), a --stream-dict
// for none of them is a mistyped name (text= for txt) that would leave the stream meant
// without its dictionary, silently: a usage error, before any sample is appended.
void TarImport::check_stream_dicts() const {
  for (const auto& [name, spec] : stream_dict_specs_)
    if (index_.count(name) == 0)
      throw UsageError("--stream-dict '" + printable(spec) + "': '" + printable(name) +
                       "' is not one of the streams (" + stream_list() + ")");
  // --stream-codec likewise; and a stream that exists already keeps its codec: a rerun
  // with the same options goes on, another codec asked of it is refused, not ignored.
  for (const auto& [name, spec] : stream_codec_specs_) {
    const auto at = index_.find(name);
    if (at == index_.end())
      throw UsageError("--stream-codec '" + printable(spec) + "': '" + printable(name) +
                       "' is not one of the streams (" + stream_list() + ")");
    const Codec has = streams_[at->second].writer->codec();
    if (has != stream_codecs_.at(name))
      throw UsageError("--stream-codec '" + printable(spec) + "': the stream '" + printable(streams_[at->second].path) +
                       "' exists with codec " + to_string(has) + "; a stream keeps the codec it was made with");
  }
}

// The root, its lock and its streams' (recovered to the committed count), and the keys
// file, before any input.
Status TarImport::prepare() {
  ZREC_RETURN_IF_ERROR(parse_options());
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

Status TarImport::read_member(Stream& s, const TarMember& m, const std::optional<NpyMember>& array) {
  if (array) ZREC_RETURN_IF_ERROR(check_npy_record(array->header, s.writer->schema(), m.path, s.path));
  else if (s.arrays)
    return invalid_argument("member '" + m.path + "' is no .npy array; stream '" + s.path + "' is " +
                            s.writer->schema().describe() + ", and its members are arrays named KEY." + s.ext + ".npy");
  else if (m.size > kMaxRagged1dPayloadBytes)
    return invalid_argument("member '" + m.path + "' is " + std::to_string(m.size) + " bytes; a record holds at most " +
                            std::to_string(kMaxRagged1dPayloadBytes));
  s.has_member = true;
  s.data_skipped = false;
  s.member_path = m.path;
  s.npy = array.has_value();
  s.npy_dims = array ? array->header.shape : std::vector<uint64_t>{};
  s.member_bytes = 0;
  s.pending_bytes = 0;
  s.numbers = 0;
  s.text.clear();
  s.parse_problem = Status::ok();
  return Status::ok();
}

// --parse: the numbers of s.text up to its last separator (all of it at the member's
// end) go into the window; a number the chunk cut stays in s.text for the next one.
Status TarImport::parse_text(Stream& s, bool member_end) {
  const std::string_view text = s.text;
  size_t complete = text.size();
  if (!member_end) {
    const size_t last = text.find_last_of(kNumberSeparators);
    complete = last == std::string_view::npos ? 0 : last + 1;
  }
  const std::string_view body = text.substr(0, complete);
  const std::string where = "member '" + s.member_path + "'";
  if (const uint64_t n = count_number_tokens(body); n > 0) {
    if (s.scalar && s.numbers + n > 1)
      return invalid_argument(where + " holds more than one number; stream '" + s.path +
                              "' is a Dense scalar store (one number per record)");
    const DType& dtype = s.writer->schema().dtype;
    const Result<uint64_t> total = parsed_record_bytes(s.numbers + n, dtype);
    if (!total.is_ok()) return total.status().with_context(where + " (--parse " + s.ext + ")");
    const uint64_t bytes = n * dtype.itemsize;
    // A record of numbers stays within the window: a small compressed member can hold
    // gigabytes of text, and its numbers would otherwise grow the window to the record limit.
    if (const uint64_t window = a_.append.window_mib << 20; s.pending_bytes + bytes > window)
      return invalid_argument(where + " holds more than " + std::to_string(window / dtype.itemsize) +
                              " numbers, more than a " + std::to_string(a_.append.window_mib) +
                              " MiB window holds (--parse " + s.ext + "); raise --window-mib for larger records");
    ZREC_ASSIGN_OR_RETURN(auto space, s.window->input_space(bytes));
    ZREC_RETURN_IF_ERROR(parse_numbers(body, *s.parse, dtype, space.data()).with_context(where));
    s.window->input_written(bytes);
    s.numbers += n;
    s.pending_bytes += bytes;
  }
  s.text.erase(0, complete);
  if (s.text.size() > kMaxNumberText)
    return invalid_argument(where + " holds a number of more than " + std::to_string(kMaxNumberText) +
                            " characters (--parse " + s.ext + ")");
  return Status::ok();
}

void TarImport::drop_sample() {
  for (auto& s : streams_) {
    if (s.has_member && s.pending_bytes > 0) (void)s.window->cut(0, s.pending_bytes, false, nullptr);
    s.has_member = false;
    s.data_skipped = false;
    s.member_bytes = 0;
    s.pending_bytes = 0;
    s.text.clear();
    s.parse_problem = Status::ok();
  }
  members_.clear();
  in_sample_ = false;
}

// A sample skipped as already present (--from-length) must be the one the root holds
// there: with --keys, its key is compared with the keys file's line for it. A rerun over
// another input (a glob regenerated between a kill and the requeue) used to append that
// input's tail after the first one's head, exit 0.
Status TarImport::check_present_key() {
  const uint64_t at = *a_.append.from_length + (skipped_ - a_.append.skip_first);
  ZREC_ASSIGN_OR_RETURN(std::string found, keys_->differs_at(at, key_));
  if (found.empty()) return Status::ok();
  return invalid_argument("sample '" + printable(key_) + "' is not sample " + std::to_string(at) + " of root '" +
                          a_.root + "': line " + std::to_string(at + 1) + " of keys file '" + a_.keys + "' is '" +
                          printable(found) + "' (this input is not the one the earlier runs read from --from-length " +
                          std::to_string(*a_.append.from_length) + "); nothing was appended");
}

// The same check against the root's own keys (--keys-stream): record `at` of its stream
// __key__ must be this sample's key. A root built with --keys-stream used to append
// another input's tail after "skipping N already present".
Status TarImport::check_present_key_stream() {
  const uint64_t at = *a_.append.from_length + (skipped_ - a_.append.skip_first);
  const Stream* s = find(kKeyStream);
  if (!key_stream_check_) {
    ZREC_ASSIGN_OR_RETURN(key_stream_check_,
                          PresentCheck::open(s->path, *a_.append.from_length, first_length_ - *a_.append.from_length));
  }
  ZREC_ASSIGN_OR_RETURN(const std::span<const uint8_t> stored, key_stream_check_->payload(at));
  const std::string found(stored.begin(), stored.end());
  if (found == key_) return Status::ok();
  return invalid_argument("sample '" + printable(key_) + "' is not sample " + std::to_string(at) + " of root '" +
                          a_.root + "': record " + std::to_string(at) + " of its stream '" + kKeyStream + "' is '" +
                          printable(found) + "' (this input is not the one the earlier runs read from --from-length " +
                          std::to_string(*a_.append.from_length) + "); nothing was appended");
}

Status TarImport::close_sample() {
  ++samples_seen_;
  if (!selection_fixed_) check_stream_dicts();  // before this first sample is appended
  selection_fixed_ = true;  // the first sample defines the streams when neither --ext nor the root does
  std::string problem;
  for (const auto& s : streams_) {
    if (s.keys) continue;  // written from the key below
    if (!s.has_member) {
      std::string list;
      for (const auto& m : members_) list += (list.empty() ? "'" : ", '") + m + "'";
      const auto alias = alias_words_.find(s.ext);
      problem = "sample '" + key_ + "' has no '" + s.ext + "' member" +
                (alias == alias_words_.end() ? std::string() : " (" + alias->second + ")") + " (it has " +
                (list.empty() ? "none" : list) + "); every sample needs one member per stream (" +
                member_stream_list() + ")";
      break;
    }
    if (s.member_bytes == 0) {
      problem = "member '" + s.member_path + "' is empty (records are nonempty)";
      break;
    }
  }
  if (!problem.empty()) {
    if (!a_.skip_incomplete) return invalid_argument(problem + "; --skip-incomplete skips such samples");
    if (++incomplete_ <= 10 || g_.verbosity >= 1) warn("skipping: " + problem);
    drop_sample();
    report();
    return Status::ok();
  }
  if (skipped_ < to_skip_) {  // --skip-first, or already in the root (--from-length)
    if (skipped_ >= a_.append.skip_first) {
      if (keys_) ZREC_RETURN_IF_ERROR(check_present_key());
      if (had_key_stream_) ZREC_RETURN_IF_ERROR(check_present_key_stream());
    }
    ++skipped_;
    drop_sample();
    report();
    return Status::ok();
  }
  for (const auto& s : streams_) {
    if (!s.parse_problem.is_ok()) return s.parse_problem;
    if (s.parse && !s.npy && s.numbers == 0)
      return invalid_argument("member '" + s.member_path + "' holds no numbers (--parse " + s.ext + ")");
  }
  for (auto& s : streams_) {
    if (s.keys) {  // the sample's key is its record (a key is never empty: it has a member)
      ZREC_ASSIGN_OR_RETURN(auto space, s.window->input_space(key_.size()));
      std::memcpy(space.data(), key_.data(), key_.size());
      s.window->input_written(key_.size());
      s.pending_bytes = key_.size();
    }
    // Dims of a Ragged record: its array's shape, or (1-D) its bytes or (--parse) its numbers.
    const uint64_t count = s.parse ? s.numbers : s.pending_bytes;
    const uint64_t* dims = s.npy ? s.npy_dims.data() : &count;
    ZREC_RETURN_IF_ERROR(s.window->cut(s.pending_bytes, 0, true, s.scalar ? nullptr : dims));
    s.has_member = false;
    s.member_bytes = 0;
    s.pending_bytes = 0;
    s.text.clear();
  }
  if (keys_) {
    keys_->add(key_);
    if (keys_->wants_flush()) ZREC_RETURN_IF_ERROR(keys_->prepare());
  }
  members_.clear();
  in_sample_ = false;
  ++added_;
  ++since_checkpoint_;
  report();
  if (a_.append.checkpoint_every != 0 && since_checkpoint_ >= a_.append.checkpoint_every) return checkpoint();
  return Status::ok();
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

Status TarImport::run() {
  meter_ = std::make_unique<ProgressMeter>(g_, "append-tar");
  TarReader reader(a_.tars);
  reader_ = &reader;
  struct Forget {  // report() runs after run() returns too (a checkpoint's)
    const TarReader*& reader;
    ~Forget() { reader = nullptr; }
  } forget{reader_};
  for (const std::string& tar : a_.tars) {
    struct stat st {};
    if (tar == "-" || ::stat(tar.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      input_total_ = 0;
      break;
    }
    input_total_ += static_cast<uint64_t>(st.st_size);
  }
  if (a_.tars.empty()) input_total_ = 0;
  meter_->set_total_bytes(input_total_);
  TarMember m;
  std::string key, ext;
  for (;;) {
    if (interrupted()) return cancelled("interrupted");
    ZREC_ASSIGN_OR_RETURN(bool more, reader.next(m));
    if (!more) break;
    if (!m.regular) {
      if (!m.directory) ++ignored_;
      continue;
    }
    split_member_path(m.path, key, ext);
    if (ext.empty()) {  // as in WebDataset, it neither joins nor ends a sample
      ++ignored_;
      continue;
    }
    if (in_sample_ && key != key_) ZREC_RETURN_IF_ERROR(close_sample());
    if (!in_sample_) {
      in_sample_ = true;
      key_ = key;
    }
    members_.push_back(m.path);  // for messages: every member the sample has
    if (ext == kKeyStream) {     // the key stream holds keys, never members
      ++ignored_;
      continue;
    }
    // "KEY.vec.npy": an array of the stream vec, unless a stream (or --ext) takes the
    // whole extension "vec.npy" as bytes (a root an earlier version imported so).
    const std::string array_stream = npy_member_stream(ext);
    const bool npy = !array_stream.empty() && stream_of_ext_.count(ext) == 0 && find(ext) == nullptr;
    if (npy) ext = array_stream;
    if (auto it = stream_of_ext_.find(ext); it != stream_of_ext_.end()) ext = it->second;
    Stream* s = find(ext);
    if (s != nullptr && s->has_member)
      return invalid_argument("sample '" + key_ + "' has two '" + ext + "' members: '" + s->member_path + "' and '" +
                              m.path + "' (a duplicate extension within a sample" +
                              (alias_words_.count(ext) > 0 ? ", or two of its alternatives" : "") + ")");
    if (s == nullptr && selection_fixed_) {
      ++ignored_;
      continue;
    }
    std::optional<NpyMember> array;
    if (npy) {
      ZREC_ASSIGN_OR_RETURN(NpyMember read, read_npy_member(reader, m));
      array = std::move(read);
      bytes_in_ += array->header_bytes;
    }
    if (s == nullptr) {
      // The extension becomes a directory ROOT/<ext>: checked before anything is made.
      if (const std::string why = stream_name_problem(ext); !why.empty())
        return invalid_argument("member '" + m.path + "' has the extension '" + ext +
                                "', which cannot name a stream: " + why + " (" + kStreamNameRule +
                                "); --ext selects the extensions to import, and others are ignored");
      ZREC_RETURN_IF_ERROR(open_stream(ext, false, array ? &array->header : nullptr));
      s = find(ext);
    }
    ZREC_RETURN_IF_ERROR(read_member(*s, m, array));
    if (skipped_ < to_skip_) {
      // This sample is skipped whole (or, incomplete, dropped): its header is enough,
      // and the tar reader passes over the data (a seek in an uncompressed file).
      s->data_skipped = true;
      s->member_bytes = m.size;
      bytes_in_ += m.size - (array ? array->header_bytes : 0);
      report();
      continue;
    }
    // The member's bytes: into the stream's window (pending until the sample closes),
    // or, for --parse, parsed a chunk at a time into it.
    // An array member's data is its record, as a member's bytes are.
    const bool as_text = s->parse && !s->npy;
    for (uint64_t left = m.size - (array ? array->header_bytes : 0); left > 0;) {
      if (interrupted()) return cancelled("interrupted");
      uint64_t got = 0;
      if (!as_text) {
        // Room for the rest of the member, but never more than it has brought so far
        // (or 1 MiB): a member larger than the window grows it by doubling with the
        // bytes that arrive, so no header's claimed size is ever allocated on trust.
        const uint64_t room = std::min(left, std::max(kReadChunk, s->pending_bytes));
        ZREC_ASSIGN_OR_RETURN(auto space, s->window->input_space(room));
        ZREC_ASSIGN_OR_RETURN(got, reader.read(space.data(), std::min<uint64_t>(left, space.size())));
        s->window->input_written(got);
        s->pending_bytes += got;
      } else {
        const size_t at = s->text.size();
        s->text.resize(at + std::min(left, kReadChunk));
        ZREC_ASSIGN_OR_RETURN(got, reader.read(reinterpret_cast<uint8_t*>(s->text.data() + at), s->text.size() - at));
        s->text.resize(at + got);
      }
      if (got == 0) return io_error("tar member '" + m.path + "' ends early (a truncated tar?)");
      left -= got;
      s->member_bytes += got;
      bytes_in_ += got;
      if (as_text) {
        // The first problem is kept for close_sample (an incomplete or skipped sample is
        // dropped without it) and the rest of the member's text is skipped.
        if (s->parse_problem.is_ok()) s->parse_problem = parse_text(*s, left == 0);
        if (!s->parse_problem.is_ok()) s->text.clear();
      }
      report();
    }
  }
  if (in_sample_) ZREC_RETURN_IF_ERROR(close_sample());
  if (streams_.empty()) return invalid_argument("no samples: the input holds no members with an extension");
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
    if (ignored_ > 0)
      spdlog::warn("ignored {} member{} (extensions not selected, no extension, or not regular files)", ignored_,
                   ignored_ == 1 ? "" : "s");
    if (incomplete_ > 0) spdlog::warn("skipped {} incomplete sample{}", incomplete_, incomplete_ == 1 ? "" : "s");
    const double secs = outcome_.elapsed_s();
    uint64_t stored = 0;
    for (const auto& st : streams_) stored += st.writer->stored_bytes() - st.first_stored;
    const uint64_t now = first_length_ + added_;
    std::vector<std::string> exts;
    for (const auto& st : streams_) exts.push_back(st.ext);
    const uint64_t by_option = std::min(skipped_, a_.append.skip_first), present = skipped_ - by_option;
    outcome_.set("path", a_.root).set("samples_appended", added_).set("samples_skipped", by_option);
    outcome_.set("samples_present", present);
    outcome_.set("incomplete_skipped", incomplete_).set("members_ignored", ignored_).set("bytes_in", bytes_in_);
    outcome_.set("stored_bytes", stored).set("length", now).set("streams", exts);
    const double rate_secs = std::max(secs, 1e-6);
    std::string line = "appended " + std::to_string(added_) + (added_ == 1 ? " sample (" : " samples (") +
                       format_bytes(static_cast<double>(bytes_in_)) + " in, " +
                       format_bytes(static_cast<double>(stored)) + " stored) to " + std::to_string(streams_.size()) +
                       " stream" + (streams_.size() == 1 ? "" : "s") + " of '" + a_.root + "' (" + stream_list() + ")";
    line += skipped_words(by_option, present);
    char tail[160];
    std::snprintf(tail, sizeof tail, " in %.2f s (%.0f samples/s, %s/s); it now holds %llu", secs,
                  static_cast<double>(added_) / rate_secs,
                  format_bytes(static_cast<double>(bytes_in_) / rate_secs).c_str(),
                  static_cast<unsigned long long>(now));
    line += tail;
    streams_.clear();
    return outcome_.finish(line);
  }
  const uint64_t held = holds();
  const bool read_root = dataset_ != nullptr;  // the root was locked and read: what it holds is known
  take_back();
  if (!read_root) return s;
  const std::string resume = resume_hint(a_.append, first_length_, held);
  if (s.code() == StatusCode::kCancelled || interrupted())
    return cancelled("interrupted; root '" + a_.root + "' holds " + std::to_string(held) + " samples" + resume);
  if (held > first_length_)
    return Status(s.code(), s.message() + "; root '" + a_.root + "' holds " + std::to_string(held) +
                                " samples, as of the last checkpoint" + resume);
  return s;
}

Status run_append_tar(const AppendTarArgs& a, const GlobalOptions& g) {
  const bool from_stdin = a.tars.empty() || std::count(a.tars.begin(), a.tars.end(), "-") > 0;
  if (std::count(a.tars.begin(), a.tars.end(), "-") > 1) throw UsageError("stdin can be read only once: give '-' once");
  if (from_stdin && stdin_is_terminal())
    throw UsageError("refusing to read a tar from a terminal (pipe it in, or name TAR files)");
  // The signal handlers first: a --wait for a lock ends on SIGINT/SIGTERM (130/143).
  InterruptScope interrupts;
  TarImport import(a, g);
  Status s = import.prepare();
  if (s.is_ok()) s = import.run();
  return import.finish(std::move(s));
}

}  // namespace

Command register_append_tar(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<AppendTarArgs>();
  CLI::App* cmd = root.add_subcommand(
      "append-tar", "Append WebDataset tar shards to named streams: one store ROOT/<ext> per extension");
  cmd->add_option("root", args->root, "Directory of named streams (created if missing)")->required();
  cmd->add_option("tars", args->tars, "Tar files (plain, gzip, zstd, xz: detected by content); - or none: stdin");
  cmd->add_option("--ext", args->ext,
                  "Extensions to import, e.g. jpg,cls (default: the root's streams, or those "
                  "of the first sample); others are ignored and counted. 'png;jpg=image' puts either "
                  "extension into the stream image")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--parse", args->parse,
                  "EXT=int or EXT=float: the member's text holds one number (a new stream is a Dense scalar "
                  "'<i8' or '<f8', e.g. class labels); EXT=ints or EXT=floats: any count of numbers (a new stream is "
                  "Ragged ndim 1 '<i8' or '<f8')")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--dense", args->dense,
                  "STREAM of .npy members (KEY.STREAM.npy): a new stream is Dense of the first array's shape, "
                  "every array of that shape (default: Ragged of the first array's ndim; a 0-d array: Dense)")
      ->type_name("STREAM")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_flag("--skip-incomplete", args->skip_incomplete,
                "Skip samples that lack a stream's extension or have an empty member (counted), instead of failing");
  cmd->add_option("--keys", args->keys, "Append each published sample's key to FILE, one line per record");
  cmd->add_flag("--keys-stream", args->keys_stream,
                "Keep each sample's key inside the root, as a record of its stream __key__ (cat --format tar "
                "names members by it; later runs keep writing it)");
  cmd->add_flag("--adopt", args->adopt,
                "ROOT is a directory of stores that append-tar did not build (no zrec-root marker): make them its "
                "streams, if they all hold the same number of records");
  add_new_store_options(cmd, args->create, "New streams");
  cmd->add_option("--stream-dict", args->stream_dicts,
                  "STREAM=FILE: the new stream STREAM gets codec zstd_dict with this dictionary of its own (one per "
                  "stream, as train-dict trains it on that stream), whatever --codec and --dict say for the others")
      ->type_name("STREAM=FILE")
      ->allow_extra_args(false);
  cmd->add_option("--stream-codec", args->stream_codecs,
                  "STREAM=CODEC: the new stream STREAM gets codec raw or zstd (one per stream), whatever --codec "
                  "says for the others (zstd_dict: --stream-dict)")
      ->type_name("STREAM=CODEC")
      ->allow_extra_args(false);
  add_append_options(cmd, args->append, "samples");
  return Command{cmd, [args, &global]() { return run_append_tar(*args, global); }, nullptr};
}

}  // namespace zrec::cli
