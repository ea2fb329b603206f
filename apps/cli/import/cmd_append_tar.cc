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
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "zrec/dataset.h"
#include "zrec/format.h"

#include "cli/app/command.h"
#include "cli/formats/webdataset_sample.h"
#include "cli/import/append_session.h"
#include "cli/import/tar_import.h"
#include "cli/import/tar_options.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/report/console.h"

namespace zrec::cli {

namespace {

// A |u1 record's payload is at most 2^31 - 1 bytes minus its 8-byte shape prefix.
// Bytes asked of the window per read of a member's data.
constexpr uint64_t kReadChunk = uint64_t{1} << 20;
// --parse: the longest number a member's text may hold (the text is parsed a chunk at
// a time, and a number cut by a chunk's end waits for the rest).
constexpr size_t kMaxNumberText = 4096;
// The separators of numbers in text (as count_number_tokens).
constexpr const char* kNumberSeparators = " \t\r\n\v\f";

}  // namespace

Status TarImport::read_member(TarStream& s, const TarMember& m, const std::optional<NpyMember>& array) {
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
Status TarImport::parse_text(TarStream& s, bool member_end) {
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
  sample_.clear();
}

Status TarImport::close_sample() {
  ++samples_seen_;
  if (!selection_fixed_) check_stream_dicts();  // before this first sample is appended
  selection_fixed_ = true;  // the first sample defines the streams when neither --ext nor the root does
  std::string problem;
  std::string list;
  for (const auto& m : sample_.members()) list += (list.empty() ? "'" : ", '") + m + "'";
  const auto no_member = [&](const std::string& stream) {
    const auto alias = opt_.alias_words.find(stream);
    return "sample '" + sample_.key() + "' has no '" + stream + "' member" +
           (alias == opt_.alias_words.end() ? std::string() : " (" + alias->second + ")") + " (it has " +
           (list.empty() ? "none" : list) + "); every sample needs one member per stream (" + member_stream_list() +
           ")";
  };
  if (!unmade_.empty()) problem = no_member(*unmade_.begin());  // no member yet to make it
  for (const auto& s : streams_) {
    if (!problem.empty()) break;
    if (s.keys) continue;  // written from the key below
    if (!s.has_member) {
      problem = no_member(s.ext);
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
      ZREC_ASSIGN_OR_RETURN(auto space, s.window->input_space(sample_.key().size()));
      std::memcpy(space.data(), sample_.key().data(), sample_.key().size());
      s.window->input_written(sample_.key().size());
      s.pending_bytes = sample_.key().size();
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
    keys_->add(sample_.key());
    if (keys_->wants_flush()) ZREC_RETURN_IF_ERROR(keys_->prepare());
  }
  sample_.clear();
  ++added_;
  ++since_checkpoint_;
  report();
  if (a_.append.checkpoint_every != 0 && since_checkpoint_ >= a_.append.checkpoint_every) return checkpoint();
  return Status::ok();
}

namespace {

// The tars' total size when every one is a regular file (the meter's percentage and
// ETA), else 0.
uint64_t input_total(const std::vector<std::string>& tars) {
  uint64_t total = 0;
  for (const std::string& tar : tars) {
    struct stat st {};
    if (tar == "-" || ::stat(tar.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

}  // namespace

// The member's bytes: into the stream's window (pending until the sample closes), or,
// for --parse, parsed a chunk at a time into it. An array member's data is its record,
// as a member's bytes are.
Status TarImport::read_data(TarStream& s, TarReader& reader, const TarMember& m,
                            const std::optional<NpyMember>& array) {
  const bool as_text = s.parse && !s.npy;
  for (uint64_t left = m.size - (array ? array->header_bytes : 0); left > 0;) {
    if (interrupted()) return cancelled("interrupted");
    uint64_t got = 0;
    if (!as_text) {
      // Room for the rest of the member, but never more than it has brought so far
      // (or 1 MiB): a member larger than the window grows it by doubling with the
      // bytes that arrive, so no header's claimed size is ever allocated on trust.
      const uint64_t room = std::min(left, std::max(kReadChunk, s.pending_bytes));
      ZREC_ASSIGN_OR_RETURN(auto space, s.window->input_space(room));
      ZREC_ASSIGN_OR_RETURN(got, reader.read(space.data(), std::min<uint64_t>(left, space.size())));
      s.window->input_written(got);
      s.pending_bytes += got;
    } else {
      const size_t at = s.text.size();
      s.text.resize(at + std::min(left, kReadChunk));
      ZREC_ASSIGN_OR_RETURN(got, reader.read(reinterpret_cast<uint8_t*>(s.text.data() + at), s.text.size() - at));
      s.text.resize(at + got);
    }
    if (got == 0) return io_error("tar member '" + m.path + "' ends early (a truncated tar?)");
    left -= got;
    s.member_bytes += got;
    bytes_in_ += got;
    if (as_text) {
      // The first problem is kept for close_sample (an incomplete or skipped sample is
      // dropped without it) and the rest of the member's text is skipped.
      if (s.parse_problem.is_ok()) s.parse_problem = parse_text(s, left == 0);
      if (!s.parse_problem.is_ok()) s.text.clear();
    }
    report();
  }
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
  input_total_ = input_total(a_.tars);
  meter_->set_total_bytes(input_total_);
  TarMember m;
  for (;;) {
    if (interrupted()) return cancelled("interrupted");
    ZREC_ASSIGN_OR_RETURN(bool more, reader.next(m));
    if (!more) break;
    if (!m.regular) {
      if (!m.directory) ++ignored_;
      continue;
    }
    MemberName name = split_member_path(m.path);
    std::string& ext = name.ext;
    if (ext.empty()) {  // as in WebDataset, it neither joins nor ends a sample
      ++ignored_;
      continue;
    }
    if (sample_.ends_sample(name.key)) ZREC_RETURN_IF_ERROR(close_sample());
    sample_.add(name.key, m.path);  // for messages: every member the sample has
    if (ext == kKeyStream) {        // the key stream holds keys, never members
      ++ignored_;
      continue;
    }
    // "KEY.vec.npy": an array of the stream vec, unless a stream (or --ext) takes the
    // whole extension "vec.npy" as bytes (a root an earlier version imported so).
    const std::string array_stream = npy_member_stream(ext);
    const bool npy = !array_stream.empty() && opt_.stream_of_ext.count(ext) == 0 && find(ext) == nullptr;
    if (npy) ext = array_stream;
    if (auto it = opt_.stream_of_ext.find(ext); it != opt_.stream_of_ext.end()) ext = it->second;
    TarStream* s = find(ext);
    if (s != nullptr && s->has_member)
      return invalid_argument("sample '" + sample_.key() + "' has two '" + ext + "' members: '" + s->member_path +
                              "' and '" + m.path + "' (a duplicate extension within a sample" +
                              (opt_.alias_words.count(ext) > 0 ? ", or two of its alternatives" : "") + ")");
    if (s == nullptr && selection_fixed_ && unmade_.count(ext) == 0) {
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
    ZREC_RETURN_IF_ERROR(read_data(*s, reader, m, array));
  }
  if (sample_.open()) ZREC_RETURN_IF_ERROR(close_sample());
  if (streams_.empty()) return invalid_argument("no samples: the input holds no members with an extension");
  return Status::ok();
}

namespace {

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
  add_append_tar_options(cmd, *args);
  return Command{cmd, [args, &global]() { return run_append_tar(*args, global); }, nullptr};
}

}  // namespace zrec::cli
