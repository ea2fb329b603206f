// append_json_to_root: see json_root_append.h.
//
// Each line is parsed (json_line.h) and each value turned into its stream's record: a
// string into a Ragged 1-D '|u1' stream (text: its UTF-8 bytes; bytes: each character
// U+0000..U+00FF one byte), a number into a Dense scalar stream, an array of numbers
// (nested arrays flattened) into a Dense stream of that many numbers or a Ragged 1-D one,
// converted to the stream's dtype as --parse does for a single store (text_numbers.h).
// Records gather in one buffer per stream and go to the writers a batch at a time
// (--window-mib, never past a checkpoint).
#include "cli/import/json_root_append.h"

#include <algorithm>
#include <map>
#include <memory>

#include "cli/formats/json_line.h"
#include "cli/formats/printable.h"
#include "cli/formats/text_numbers.h"
#include "cli/import/frame_reader.h"
#include "cli/import/root_append.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/report/console.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

namespace {

enum class How { kText, kBytes, kOne, kMany };

// One stream: how its values become records, and the records of the batch in hand.
struct Target {
  How how = How::kText;
  NumberSyntax syntax = NumberSyntax::kInts;
  uint64_t dense_count = 0;  // Dense: the numbers of a record; 0: Ragged
  std::vector<uint8_t> data;
  std::vector<uint64_t> sizes, dims;
};

std::map<std::string, std::string> parse_json_specs(const std::vector<std::string>& specs) {
  std::map<std::string, std::string> out;
  for (const auto& spec : specs) {
    const size_t eq = spec.find('=');
    const std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
    const std::string how = eq == std::string::npos ? "" : spec.substr(eq + 1);
    if (name.empty() ||
        (how != "text" && how != "bytes" && how != "int" && how != "float" && how != "ints" && how != "floats"))
      throw UsageError("--parse '" + printable(spec) +
                       "': a root's streams take STREAM=text|bytes|int|float|ints|floats, e.g. --parse label=int");
    if (!out.emplace(name, how).second)
      throw UsageError("--parse '" + printable(spec) + "': the stream '" + printable(name) + "' is named twice");
  }
  return out;
}

bool is_bytes_stream(const Schema& s) { return !s.is_dense() && s.ndim == 1 && s.dtype.str() == "|u1"; }

// The HOW a stream's schema implies: text for Ragged 1-D '|u1', else numbers of its dtype.
std::string default_how(const Schema& s) {
  if (is_bytes_stream(s)) return "text";
  const bool scalar = s.is_dense() && s.ndim == 0;
  return std::string(s.dtype.kind == DTypeKind::kFloat ? "float" : "int") + (scalar ? "" : "s");
}

Result<Target> make_target(const RootAppend& r, size_t i, const std::string& how) {
  const Schema& s = r.schema(i);
  Target t;
  const auto bad = [&](const std::string& need) {
    return invalid_argument(r.label(i) + " is " + s.describe() + "; --parse " + r.name(i) + "=" + how + " needs " +
                            need);
  };
  if (how == "text" || how == "bytes") {
    if (!is_bytes_stream(s)) return bad("a Ragged ndim-1 '|u1' stream (strings)");
    t.how = how == "text" ? How::kText : How::kBytes;
    return t;
  }
  t.syntax = how == "int" || how == "ints" ? NumberSyntax::kInts : NumberSyntax::kFloats;
  t.how = how == "int" || how == "float" ? How::kOne : How::kMany;
  if (Status ok = check_number_dtype(t.syntax, s.dtype); !ok.is_ok()) return ok.with_context(r.label(i));
  if (t.how == How::kOne && !(s.is_dense() && s.ndim == 0)) return bad("a Dense scalar stream (one number)");
  if (!s.is_dense() && s.ndim != 1) return bad("a Dense or Ragged ndim-1 stream (arrays of numbers)");
  if (s.is_dense()) {
    t.dense_count = 1;
    for (uint64_t d : *s.item_shape) t.dense_count *= d;
  }
  return t;
}

// Latin-1 of UTF-8 text: each character U+0000..U+00FF becomes one byte.
Status latin1(const std::string& text, std::vector<uint8_t>& out) {
  for (size_t k = 0; k < text.size(); ++k) {
    const auto c = static_cast<unsigned char>(text[k]);
    if (c < 0x80) {
      out.push_back(c);
    } else if ((c == 0xC2 || c == 0xC3) && k + 1 < text.size()) {
      out.push_back(static_cast<uint8_t>(((c & 0x03) << 6) | (static_cast<unsigned char>(text[++k]) & 0x3F)));
    } else {
      return invalid_argument("holds a character past U+00FF (bytes: each character is one byte)");
    }
  }
  return Status::ok();
}

// Adds `f`'s value to `t` as one record.
Status add_value(Target& t, const JsonField& f, const DType& dtype) {
  using Kind = JsonField::Kind;
  if (t.how == How::kText || t.how == How::kBytes) {
    if (f.kind != Kind::kString) return invalid_argument("is not a string (the stream holds bytes)");
    const size_t at = t.data.size();
    if (t.how == How::kText) t.data.insert(t.data.end(), f.text.begin(), f.text.end());
    else ZREC_RETURN_IF_ERROR(latin1(f.text, t.data));
    const uint64_t n = t.data.size() - at;
    if (n == 0) return invalid_argument("is empty (records are nonempty)");
    t.sizes.push_back(n);
    t.dims.push_back(n);
    return Status::ok();
  }
  if (f.kind == Kind::kString) return invalid_argument("is a string; the stream holds numbers");
  if (t.how == How::kOne && f.kind != Kind::kNumber) return invalid_argument("is not one number");
  if (t.dense_count == 0 && f.kind != Kind::kArray) return invalid_argument("is not an array (the stream is Ragged)");
  if (t.dense_count != 0 && f.count != t.dense_count)
    return invalid_argument("holds " + std::to_string(f.count) + " numbers; each record is exactly " +
                            std::to_string(t.dense_count));
  if (f.count == 0) return invalid_argument("is an empty array (records are nonempty)");
  ZREC_ASSIGN_OR_RETURN(const uint64_t bytes, parsed_record_bytes(f.count, dtype));
  const size_t at = t.data.size();
  t.data.resize(at + bytes);
  if (Status s = parse_numbers(f.text, t.syntax, dtype, t.data.data() + at); !s.is_ok()) {
    t.data.resize(at);
    return s;
  }
  t.sizes.push_back(bytes);
  t.dims.push_back(f.count);
  return Status::ok();
}

class JsonFeed {
 public:
  JsonFeed(RootAppend& r, std::vector<Target> targets, uint64_t window_bytes)
      : r_(r), targets_(std::move(targets)), window_(window_bytes) {
    for (size_t i = 0; i < r_.stream_count(); ++i) index_[r_.name(i)] = i;
  }

  Status run(io::InputStream& in, bool skip_empty) {
    FrameReader reader(in, '\n');
    const std::string label = in.name() == "-" ? "stdin" : "'" + in.name() + "'";
    for (uint64_t number = 1;; ++number) {
      if (interrupted()) return cancelled("interrupted");
      ZREC_ASSIGN_OR_RETURN(auto frame, reader.next());
      if (!frame) break;
      r_.count_input(frame->size() + 1);
      if (frame->find_first_not_of(" \t\r") == std::string_view::npos) {
        if (skip_empty) continue;
        return invalid_argument(label + " line " + std::to_string(number) +
                                " is empty (each line is one sample; --skip-empty drops empty lines)");
      }
      if (r_.to_skip() > 0) {  // a sample the root holds already (or --skip-first)
        r_.skip(1);
        continue;
      }
      if (Status s = add_line(*frame); !s.is_ok()) return s.with_context(label + " line " + std::to_string(number));
      if (++batch_ >= r_.room() || batch_bytes() >= window_) ZREC_RETURN_IF_ERROR(flush());
    }
    return flush();
  }

 private:
  Status add_line(std::string_view line) {
    ZREC_ASSIGN_OR_RETURN(const std::vector<JsonField> fields, parse_json_object(line));
    std::vector<bool> seen(targets_.size());
    for (const auto& f : fields) {
      const auto it = index_.find(f.key);
      if (it == index_.end())
        return invalid_argument("the key \"" + printable(f.key) + "\" is no stream of root '" + r_.root() + "'");
      seen[it->second] = true;
      if (Status s = add_value(targets_[it->second], f, r_.schema(it->second).dtype); !s.is_ok())
        return invalid_argument("the value of \"" + printable(f.key) + "\" " + s.message());
    }
    for (size_t i = 0; i < seen.size(); ++i)
      if (!seen[i])
        return invalid_argument("the key \"" + printable(r_.name(i)) +
                                "\" is missing (every stream of the root gets one record per sample)");
    return Status::ok();
  }
  uint64_t batch_bytes() const {
    uint64_t n = 0;
    for (const auto& t : targets_) n += t.data.size();
    return n;
  }
  Status flush() {
    if (batch_ == 0) return Status::ok();
    std::vector<std::vector<RecordRef>> refs(targets_.size());
    for (size_t i = 0; i < targets_.size(); ++i) {
      Target& t = targets_[i];
      const bool ragged = t.dense_count == 0;
      uint64_t at = 0;
      for (size_t k = 0; k < t.sizes.size(); ++k) {
        refs[i].push_back({t.data.data() + at, t.sizes[k], ragged ? &t.dims[k] : nullptr});
        at += t.sizes[k];
      }
    }
    ZREC_RETURN_IF_ERROR(r_.append(refs));
    for (auto& t : targets_) {
      t.data.clear();
      t.sizes.clear();
      t.dims.clear();
    }
    batch_ = 0;
    return Status::ok();
  }

  RootAppend& r_;
  std::vector<Target> targets_;  // in r_'s stream order
  std::map<std::string, size_t> index_;
  const uint64_t window_;
  uint64_t batch_ = 0;  // samples in the buffers
};

}  // namespace

Status append_json_to_root(const std::string& root, const std::string& input, const std::vector<std::string>& parse,
                           bool skip_empty, const AppendArgs& args, const GlobalOptions& global) {
  const std::map<std::string, std::string> how = parse_json_specs(parse);
  if (input == "-" && stdin_is_terminal())
    throw UsageError("refusing to read JSON lines from a terminal (pipe them in, or use -i FILE)");
  ZREC_ASSIGN_OR_RETURN(const Dataset ds, Dataset::open(root));
  if (!ds.marked()) return invalid_argument("'" + root + "' is no root (it has no zrec-root marker)");
  InterruptScope interrupts;  // a --wait for the lock ends on SIGINT/SIGTERM
  ZREC_ASSIGN_OR_RETURN(auto in, io::InputStream::open(input, global.context(Work::kWrite).control));
  ZREC_ASSIGN_OR_RETURN(auto r, RootAppend::open("append-stream", root, args, global, ds.streams()));
  Status s;
  std::vector<Target> targets;
  for (const auto& [name, h] : how)
    if (std::find(ds.streams().begin(), ds.streams().end(), name) == ds.streams().end())
      throw UsageError("--parse " + printable(name) + "=" + h + ": root '" + root + "' has no stream '" +
                       printable(name) + "'");
  for (size_t i = 0; s.is_ok() && i < r->stream_count(); ++i) {
    const auto it = how.find(r->name(i));
    auto t = make_target(*r, i, it == how.end() ? default_how(r->schema(i)) : it->second);
    if (t.is_ok()) targets.push_back(std::move(*t));
    else s = t.status();
  }
  if (s.is_ok()) s = JsonFeed(*r, std::move(targets), args.window_mib << 20).run(in, skip_empty);
  return r->finish(std::move(s));
}

}  // namespace zrec::cli
