// zrec append-tar: WebDataset tar shards into aligned named streams. Members are
// grouped into samples as WebDataset does (key: the path up to the first dot of the
// basename; extension: the rest; consecutive members with one key form a sample), and
// each selected extension goes to the store ROOT/<ext>, one record per sample, so
// record i of every stream belongs to sample i.
//
// Streams are published together, at the end and at each --checkpoint-every; a kill
// between two streams' publications leaves them at unequal lengths, which the next run
// cuts back to the common length first (cut_back_store, docs/import.md).
//
// Memory: each stream has its own window (--window-mib each). A member's bytes are
// read from libarchive straight into its stream's window as pending bytes and cut into
// a record when the sample is known complete, so a huge member costs its own size (up
// to twice that while the window doubles to it: its header's size is a claim, never
// allocated on trust) and millions of tiny members cost only the window. A --parse member's text is parsed
// as it is read, a chunk at a time, into the window: its text is never held whole, and
// its numbers (up to 4x the text: "1 " is 8 bytes of <i8) stop at the most a record holds.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>

#include <spdlog/spdlog.h>

#include "zrec/cut_back.h"
#include "zrec/dataset.h"
#include "zrec/file.h"
#include "zrec/limits.h"
#include "zrec/store.h"

#include "cli/commands.h"
#include "cli/formats/stream_name.h"
#include "cli/formats/text_numbers.h"
#include "cli/import/append_session.h"
#include "cli/import/new_store_options.h"
#include "cli/import/tar_reader.h"
#include "cli/keys_file.h"
#include "cli/option_values.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "cli/usage.h"

namespace zrec::cli {

namespace {

struct AppendTarArgs {
  std::string root;
  std::vector<std::string> tars;
  std::vector<std::string> ext;
  std::vector<std::string> parse;
  bool skip_incomplete = false;
  std::string keys;
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

// One named stream: ROOT/<ext>, its writer and window, and the current sample's member.
struct Stream {
  std::string ext, path;
  std::optional<NumberSyntax> parse;
  std::unique_ptr<StoreWriter> writer;
  std::unique_ptr<RecordWindow> window;
  uint64_t first_stored = 0;
  bool scalar = false;  // a Dense scalar store: one number per member
  // The current sample's member of this extension.
  bool has_member = false;
  std::string member_path;
  uint64_t member_bytes = 0;   // read from the tar
  uint64_t pending_bytes = 0;  // in the window for its record: the bytes, or (--parse) the numbers parsed
  uint64_t numbers = 0;        // --parse: numbers parsed
  std::string text;            // --parse: text read but not parsed yet (a number cut by the chunk's end)
  Status parse_problem;        // --parse: why the member's text is no record
};

class TarImport {
 public:
  TarImport(const AppendTarArgs& a, const GlobalOptions& g) : a_(a), g_(g) {}
  ~TarImport() {
    for (auto& s : streams_)
      if (s.writer) s.writer->abort();
    if (keys_) keys_->rollback();
  }

  Status prepare();
  Status run();
  Status finish(Status s);

 private:
  Status parse_options();
  WriterOptions writer_options() const;
  Status open_stream(const std::string& ext, bool exists);
  Status check_schema(const Stream& s) const;
  Status read_member(Stream& s, const TarMember& m);
  Status parse_text(Stream& s, bool member_end);
  Status close_sample();
  Status checkpoint();
  void drop_sample();
  Stream* find(const std::string& ext) {
    auto it = index_.find(ext);
    return it == index_.end() ? nullptr : &streams_[it->second];
  }
  uint64_t holds() const {
    uint64_t n = UINT64_MAX;
    for (const auto& s : streams_) n = std::min(n, s.writer->published_length());
    return streams_.empty() ? first_length_ : n;
  }
  std::string stream_list() const {
    std::string out;
    for (const auto& s : streams_) out += (out.empty() ? "" : ", ") + s.ext;
    return out;
  }
  void warn(const std::string& message) {
    if (meter_) meter_->print_above([&] { spdlog::warn("{}", message); });
    else spdlog::warn("{}", message);
  }
  void report() {
    if (meter_) meter_->update(samples_seen_, bytes_in_);
  }

  const AppendTarArgs& a_;
  const GlobalOptions& g_;
  std::map<std::string, NumberSyntax> parse_;
  CreateOptions create_;
  std::vector<Stream> streams_;  // index_ order: as created or found
  std::map<std::string, size_t> index_;
  bool selection_fixed_ = false;
  std::unique_ptr<KeysFile> keys_;
  std::unique_ptr<ProgressMeter> meter_;
  CommandReport outcome_{"append-tar", g_, a_.append.json};  // its clock starts here

  uint64_t first_length_ = 0;  // samples the streams held when the run began
  // The current sample.
  bool in_sample_ = false;
  std::string key_;
  std::vector<std::string> members_;
  // Counts.
  uint64_t samples_seen_ = 0, added_ = 0, skipped_ = 0, incomplete_ = 0, ignored_ = 0, since_checkpoint_ = 0;
  uint64_t bytes_in_ = 0;
};

Status TarImport::parse_options() {
  for (const auto& spec : a_.parse) {
    const size_t eq = spec.find('=');
    const std::string ext = eq == std::string::npos ? "" : spec.substr(0, eq);
    const std::string how = eq == std::string::npos ? "" : spec.substr(eq + 1);
    if (ext.empty() || (how != "ints" && how != "floats"))
      throw UsageError("--parse '" + spec + "': expected EXT=ints or EXT=floats (e.g. --parse cls=ints)");
    if (const std::string why = stream_name_problem(ext); !why.empty())
      throw UsageError("--parse '" + spec + "': '" + ext + "' cannot name a stream: " + why + " (" + kStreamNameRule +
                       ")");
    parse_[ext] = how == "ints" ? NumberSyntax::kInts : NumberSyntax::kFloats;
  }
  for (const auto& ext : a_.ext)
    if (const std::string why = stream_name_problem(ext); !why.empty())
      throw UsageError("--ext '" + ext + "' cannot name a stream: " + why + " (" + kStreamNameRule + ")");
  ZREC_ASSIGN_OR_RETURN(create_, new_store_options(a_.create, a_.append.checksum.value_or(false), a_.append.level));
  return Status::ok();
}

WriterOptions TarImport::writer_options() const {
  WriterOptions o;
  o.lanes = g_.lanes(Work::kWrite);
  o.wait = g_.wait;
  o.level = a_.append.level;
  o.checksum = a_.append.checksum;
  return o;
}

Status TarImport::check_schema(const Stream& s) const {
  const Schema& schema = s.writer->schema();
  if (!s.parse) {
    if (schema.is_dense() || schema.ndim != 1 || schema.dtype.str() != "|u1")
      return invalid_argument("stream '" + s.path + "' is " + schema.describe() +
                              "; a stream of tar members must be Ragged '|u1' with ndim 1 (or use --parse " + s.ext +
                              "=ints|floats for numbers)");
    return Status::ok();
  }
  const bool fits = schema.is_dense() ? schema.ndim == 0 : schema.ndim == 1;
  Status dtype_ok = check_number_dtype(*s.parse, schema.dtype);
  if (!fits || !dtype_ok.is_ok())
    return invalid_argument("stream '" + s.path + "' is " + schema.describe() + "; --parse " + s.ext +
                            " needs a Dense scalar or Ragged ndim-1 store of a " +
                            (*s.parse == NumberSyntax::kInts ? "integer" : "float") + " dtype");
  return Status::ok();
}

Status TarImport::open_stream(const std::string& ext, bool exists) {
  Stream s;
  s.ext = ext;
  s.path = join_path(a_.root, ext);
  if (auto it = parse_.find(ext); it != parse_.end()) s.parse = it->second;
  if (!exists) {
    if (first_length_ > 0)
      return invalid_argument("'" + a_.root + "' holds " + std::to_string(first_length_) + " samples in streams " +
                              stream_list() + "; a new stream '" + ext + "' would not line up with them");
    CreateOptions c = create_;
    c.schema.ndim = 1;
    c.schema.dtype = parse_dtype(!s.parse ? "|u1" : *s.parse == NumberSyntax::kInts ? "<i8" : "<f8").value();
    ZREC_RETURN_IF_ERROR(create_store(s.path, c));
    spdlog::info("created stream '{}': {}", s.path, c.schema.describe());
  }
  ZREC_ASSIGN_OR_RETURN(s.writer, StoreWriter::open(s.path, writer_options()));
  // Existing streams are all opened before the first sample, so this refuses before
  // anything is appended (as append-stream refuses --level on a raw store).
  if (a_.append.level != 0 && s.writer->codec() == Codec::kRaw)
    throw UsageError("--level is for zstd and zstd_dict; stream '" + s.path + "' is a raw store");
  ZREC_RETURN_IF_ERROR(check_schema(s));
  s.scalar = s.writer->schema().is_dense();
  s.first_stored = s.writer->stored_bytes();
  s.window = std::make_unique<RecordWindow>(*s.writer, a_.append.window_mib << 20);
  index_[ext] = streams_.size();
  streams_.push_back(std::move(s));
  return Status::ok();
}

// The root, its streams (recovered to one length), and the keys file, before any input.
Status TarImport::prepare() {
  ZREC_RETURN_IF_ERROR(parse_options());
  struct stat st;
  if (::stat(a_.root.c_str(), &st) != 0) {
    if (::mkdir(a_.root.c_str(), 0755) != 0 && errno != EEXIST)
      return io::errno_status(errno, "cannot create", a_.root);
  } else if (!S_ISDIR(st.st_mode)) {
    return invalid_argument("'" + a_.root + "' is not a directory");
  }
  if (is_store_dir(a_.root))
    return invalid_argument("'" + a_.root +
                            "' is a store; append-tar appends to a directory of named streams "
                            "(ROOT/<ext>), e.g. a new directory");

  // Streams at unequal lengths: a run was killed between two streams' publications.
  const std::vector<std::string> found = child_stores(a_.root);
  ZREC_RETURN_IF_ERROR(check_root_streams(a_.root, found));
  std::vector<uint64_t> lengths;
  for (const auto& name : found) {
    ZREC_ASSIGN_OR_RETURN(auto store, Store::open(join_path(a_.root, name)));
    lengths.push_back(store->length());
  }
  if (!found.empty()) first_length_ = *std::min_element(lengths.begin(), lengths.end());
  for (size_t i = 0; i < found.size(); ++i) {
    if (lengths[i] == first_length_) continue;
    const std::string path = join_path(a_.root, found[i]);
    ZREC_RETURN_IF_ERROR(cut_back_store(path, first_length_, g_.wait));
    spdlog::warn(
        "cut stream '{}' back from {} to {} records, the length of the root's other streams (an earlier "
        "run stopped between the streams' publications)",
        path, lengths[i], first_length_);
  }

  if (!a_.ext.empty()) {
    for (const auto& name : found)
      if (std::find(a_.ext.begin(), a_.ext.end(), name) == a_.ext.end())
        return invalid_argument("'" + a_.root + "' has a stream '" + name +
                                "' that --ext leaves out; every stream of a root gets one record per sample "
                                "(select it too, or import into another root)");
    for (const auto& name : found) ZREC_RETURN_IF_ERROR(open_stream(name, true));
    for (const auto& ext : a_.ext)
      if (find(ext) == nullptr) ZREC_RETURN_IF_ERROR(open_stream(ext, false));
    selection_fixed_ = true;
  } else if (!found.empty()) {
    for (const auto& name : found) ZREC_RETURN_IF_ERROR(open_stream(name, true));
    // Empty streams (a run killed before its first publication) do not fix the set:
    // the first sample still adds the extensions it brings.
    selection_fixed_ = first_length_ > 0;
  }
  for (const auto& [ext, how] : parse_)
    if (selection_fixed_ && find(ext) == nullptr)
      throw UsageError("--parse " + ext + ": '" + ext + "' is not one of the streams (" + stream_list() + ")");

  if (!a_.keys.empty()) {
    ZREC_ASSIGN_OR_RETURN(keys_, KeysFile::open(a_.keys));
    ZREC_ASSIGN_OR_RETURN(uint64_t lines, keys_->count_lines());
    if (lines > first_length_) {
      ZREC_RETURN_IF_ERROR(keys_->cut_to_lines(first_length_));
      spdlog::warn("cut keys file '{}' back from {} to {} lines, the streams' length", a_.keys, lines, first_length_);
    } else if (lines < first_length_) {
      return invalid_argument("keys file '" + a_.keys + "' has " + std::to_string(lines) +
                              " lines but the streams of '" + a_.root + "' hold " + std::to_string(first_length_) +
                              " samples (give the keys file of the earlier runs, or none)");
    }
  }
  return Status::ok();
}

Status TarImport::read_member(Stream& s, const TarMember& m) {
  if (m.size > kMaxRagged1dPayloadBytes)
    return invalid_argument("member '" + m.path + "' is " + std::to_string(m.size) + " bytes; a record holds at most " +
                            std::to_string(kMaxRagged1dPayloadBytes));
  s.has_member = true;
  s.member_path = m.path;
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
    s.member_bytes = 0;
    s.pending_bytes = 0;
    s.text.clear();
    s.parse_problem = Status::ok();
  }
  members_.clear();
  in_sample_ = false;
}

Status TarImport::close_sample() {
  ++samples_seen_;
  selection_fixed_ = true;  // the first sample defines the streams when neither --ext nor the root does
  std::string problem;
  for (const auto& s : streams_) {
    if (!s.has_member) {
      std::string list;
      for (const auto& m : members_) list += (list.empty() ? "'" : ", '") + m + "'";
      problem = "sample '" + key_ + "' has no '" + s.ext + "' member (it has " + (list.empty() ? "none" : list) +
                "); every sample needs one member per stream (" + stream_list() + ")";
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
  if (skipped_ < a_.append.skip_first) {
    ++skipped_;
    drop_sample();
    report();
    return Status::ok();
  }
  for (const auto& s : streams_) {
    if (!s.parse_problem.is_ok()) return s.parse_problem;
    if (s.parse && s.numbers == 0)
      return invalid_argument("member '" + s.member_path + "' holds no numbers (--parse " + s.ext + ")");
  }
  for (auto& s : streams_) {
    // Dims of a Ragged 1-D record: its bytes, or (--parse) its numbers.
    const uint64_t dims = s.parse ? s.numbers : s.pending_bytes;
    ZREC_RETURN_IF_ERROR(s.window->cut(s.pending_bytes, 0, true, s.scalar ? nullptr : &dims));
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

// Publishes every stream. A kill between two publish() calls leaves the streams at
// unequal lengths: prepare() of the next run cuts them back.
Status TarImport::checkpoint() {
  for (auto& s : streams_) ZREC_RETURN_IF_ERROR(s.window->flush());
  if (interrupted()) return cancelled("interrupted");
  if (keys_) ZREC_RETURN_IF_ERROR(keys_->prepare());
  for (auto& s : streams_) ZREC_RETURN_IF_ERROR(s.writer->publish());
  if (keys_) keys_->commit();
  since_checkpoint_ = 0;
  spdlog::debug("checkpoint: the streams of '{}' hold {} samples", a_.root, first_length_ + added_ + 0);
  return Status::ok();
}

Status TarImport::run() {
  meter_ = std::make_unique<ProgressMeter>(g_, "append-tar");
  TarReader reader(a_.tars);
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
    Stream* s = find(ext);
    if (s == nullptr) {
      if (selection_fixed_) {
        ++ignored_;
        continue;
      }
      // The extension becomes a directory ROOT/<ext>: checked before anything is made.
      if (const std::string why = stream_name_problem(ext); !why.empty())
        return invalid_argument("member '" + m.path + "' has the extension '" + ext +
                                "', which cannot name a stream: " + why + " (" + kStreamNameRule +
                                "); --ext selects the extensions to import, and others are ignored");
      ZREC_RETURN_IF_ERROR(open_stream(ext, false));
      s = find(ext);
    }
    if (s->has_member)
      return invalid_argument("sample '" + key_ + "' has two '" + ext + "' members: '" + s->member_path + "' and '" +
                              m.path + "' (a duplicate extension within a sample)");
    members_.push_back(m.path);
    ZREC_RETURN_IF_ERROR(read_member(*s, m));
    // The member's bytes: into the stream's window (pending until the sample closes),
    // or, for --parse, parsed a chunk at a time into it.
    for (uint64_t left = m.size; left > 0;) {
      if (interrupted()) return cancelled("interrupted");
      uint64_t got = 0;
      if (!s->parse) {
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
      if (s->parse) {
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
  if (s.is_ok() && interrupted()) s = cancelled("interrupted");
  if (s.is_ok()) s = checkpoint();
  if (s.is_ok()) {
    for (auto& st : streams_) {
      s = st.writer->close();
      if (!s.is_ok()) break;
    }
  }
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
    outcome_.set("path", a_.root).set("samples_appended", added_).set("samples_skipped", skipped_);
    outcome_.set("incomplete_skipped", incomplete_).set("members_ignored", ignored_).set("bytes_in", bytes_in_);
    outcome_.set("stored_bytes", stored).set("length", now).set("streams", exts);
    const double rate_secs = std::max(secs, 1e-6);
    std::string line = "appended " + std::to_string(added_) + (added_ == 1 ? " sample (" : " samples (") +
                       format_bytes(static_cast<double>(bytes_in_)) + " in, " +
                       format_bytes(static_cast<double>(stored)) + " stored) to " + std::to_string(streams_.size()) +
                       " stream" + (streams_.size() == 1 ? "" : "s") + " of '" + a_.root + "' (" + stream_list() + ")";
    if (skipped_ > 0) line += " after skipping " + std::to_string(skipped_);
    char tail[160];
    std::snprintf(tail, sizeof tail, " in %.2f s (%.0f samples/s, %s/s); it now holds %llu", secs,
                  static_cast<double>(added_) / rate_secs,
                  format_bytes(static_cast<double>(bytes_in_) / rate_secs).c_str(),
                  static_cast<unsigned long long>(now));
    line += tail;
    streams_.clear();
    return outcome_.finish(line);
  }
  for (auto& st : streams_) st.writer->abort();
  if (keys_) keys_->rollback();
  const uint64_t held = holds();
  const uint64_t done = a_.append.skip_first + (held - first_length_);
  const std::string resume = done > 0 ? " (resume with --skip-first " + std::to_string(done) + ")" : "";
  if (s.code() == StatusCode::kCancelled || interrupted())
    return cancelled("interrupted; the streams of '" + a_.root + "' hold " + std::to_string(held) + " samples" +
                     resume);
  if (held > first_length_)
    return Status(s.code(), s.message() + "; the streams of '" + a_.root + "' hold " + std::to_string(held) +
                                " samples, as of the last checkpoint" + resume);
  return s;
}

Status run_append_tar(const AppendTarArgs& a, const GlobalOptions& g) {
  const bool from_stdin = a.tars.empty() || std::count(a.tars.begin(), a.tars.end(), "-") > 0;
  if (std::count(a.tars.begin(), a.tars.end(), "-") > 1) throw UsageError("stdin can be read only once: give '-' once");
  if (from_stdin && stdin_is_terminal())
    throw UsageError("refusing to read a tar from a terminal (pipe it in, or name TAR files)");
  TarImport import(a, g);
  ZREC_RETURN_IF_ERROR(import.prepare());
  InterruptScope interrupts;  // after the locks are taken, as in AppendSession
  Status s = import.run();
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
                  "of the first sample); others are ignored and counted")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--parse", args->parse,
                  "EXT=ints or EXT=floats: the member's text holds numbers (a new stream is "
                  "Ragged ndim 1 '<i8' or '<f8')")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_flag("--skip-incomplete", args->skip_incomplete,
                "Skip samples that lack a stream's extension or have an empty member (counted), instead of failing");
  cmd->add_option("--keys", args->keys, "Append each published sample's key to FILE, one line per record");
  add_new_store_options(cmd, args->create, "New streams");
  add_append_options(cmd, args->append);
  cmd->footer(
      "Members are grouped into samples as WebDataset does: 'a/0001.seg.png' has key 'a/0001' and\n"
      "extension 'seg.png'; consecutive members with one key form a sample. Record i of every\n"
      "stream belongs to sample i. --window-mib is the budget of each stream's window.\n\n"
      "Examples:\n"
      "  zrec append-tar ds/ shard-000000.tar shard-000001.tar.gz\n"
      "  cat shard-*.tar | zrec append-tar --ext jpg,cls --parse cls=ints --keys ds.keys ds/ -\n"
      "  zrec append-tar --checkpoint-every 10000 --skip-incomplete ds/ shards/*.tar.zst");
  return Command{cmd, [args, &global]() { return run_append_tar(*args, global); }, nullptr};
}

}  // namespace zrec::cli
