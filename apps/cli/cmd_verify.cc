// zrec verify: check a store (or each store of a directory of named streams) against
// every rule of docs/format.md §8 and more, reporting every problem with its record, data
// file and offset. The checks live in the core (include/zrec/verify.h); this file
// parses options, reads per-record digests, draws progress and prints the report.
//
// Exit codes (man/zrec-verify.1): 0 valid; 1 corrupt (a problem was found); 2 usage
// error, or the store could not be checked (missing, locked, unreadable).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "zrec/dataset.h"
#include "zrec/remote.h"
#include "zrec/verify.h"

#include "cli/app/app.h"
#include "cli/app/command.h"
#include "cli/formats/printable.h"
#include "cli/options/many_paths.h"
#include "cli/options/option_values.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"
#include "cli/os/side_file.h"
#include "cli/report/console.h"
#include "cli/report/json.h"
#include "cli/report/progress.h"
#include "cli/roots/root_problems.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

namespace {

struct VerifyArgs {
  std::string path;
  bool quick = false;
  bool json = false;
  uint64_t max_errors = 100;
  std::string against;
};

using Hash = RecordDigests::Hash;

bool parse_hex_hash(std::string_view text, Hash& out) {
  if (text.size() != 64) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < 32; ++i) {
    const int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

bool parse_id(std::string_view text, uint64_t& out) {
  if (text.empty() || text.size() > 19) return false;
  out = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<uint64_t>(c - '0');
  }
  return true;
}

// The output of `zrec digest --per-record`, read as verify reaches the records
// (zrec::RecordDigests): one record per line, its ID and the SHA-256 of its logical bytes
// in hex, in either order ("17 <hex>" or "<hex>  17"); a line holding only a hash takes
// the next ID. Blank lines and lines starting with '#' are skipped. IDs must run 0, 1,
// 2, ... without gaps. Memory: one read's bytes (64 KiB) and the digests verify asks for
// at once, whatever the file's length (all of it was read first, 32 bytes a record, before).
class DigestFile final : public RecordDigests {
 public:
  static Result<std::unique_ptr<DigestFile>> open(const std::string& path) {
    ZREC_ASSIGN_OR_RETURN(SideInput side, SideInput::open(path, "--against"));
    return std::unique_ptr<DigestFile>(new DigestFile(path, std::move(side)));
  }

  Status next(uint64_t count, std::vector<Hash>& out) override {
    out.clear();
    Hash hash;
    while (out.size() < count) {
      ZREC_ASSIGN_OR_RETURN(const bool more, read_one(hash));
      if (!more) break;
      out.push_back(hash);
    }
    return Status::ok();
  }

  Result<uint64_t> count_all() override {
    Hash hash;
    for (;;) {
      ZREC_ASSIGN_OR_RETURN(const bool more, read_one(hash));
      if (!more) return listed_;
    }
  }

 private:
  static constexpr size_t kMaxLine = 4096;

  DigestFile(std::string path, SideInput side) : path_(std::move(path)), side_(std::move(side)), buf_(1 << 16) {}

  Status bad(uint64_t line_no, const std::string& rule) const {
    return invalid_argument("'" + path_ + "' line " + std::to_string(line_no) + ": " + rule);
  }

  // The next line (without its '\n') into `line`, valid until the next call; false at
  // the end of the file.
  Result<bool> next_line(std::string_view& line) {
    for (;;) {
      size_t nl = pending_.find('\n', start_);
      if (nl == std::string::npos && eof_) {
        if (start_ >= pending_.size()) return false;
        nl = pending_.size();
      }
      if (nl != std::string::npos) {
        line = std::string_view(pending_).substr(start_, nl - start_);
        start_ = std::min(nl + 1, pending_.size());
        ++line_no_;
        if (line.size() > kMaxLine) return bad(line_no_, "line too long for a per-record digest");
        return true;
      }
      pending_.erase(0, start_);
      start_ = 0;
      if (pending_.size() > kMaxLine) return bad(line_no_ + 1, "line too long for a per-record digest");
      ZREC_ASSIGN_OR_RETURN(const size_t n, side_.stream().read_some(buf_.data(), buf_.size()));
      if (n == 0) eof_ = true;
      pending_.append(buf_.data(), n);
    }
  }

  // The next digest of the list into `hash`; false at the end of the file.
  Result<bool> read_one(Hash& hash) {
    std::string_view line;
    for (;;) {
      ZREC_ASSIGN_OR_RETURN(const bool more, next_line(line));
      if (!more) return false;
      uint64_t id = listed_;
      bool have_hash = false, have_id = false, first = true;
      // Tokens split by hand: string_view::find_first_of calls memchr on the set once a
      // character, 18% of a `verify --against` of 4 Mi one-byte records.
      const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
      for (size_t at = 0; at < line.size();) {
        if (blank(line[at])) {
          ++at;
          continue;
        }
        size_t end = at + 1;
        while (end < line.size() && !blank(line[end])) ++end;
        const std::string_view t = line.substr(at, end - at);
        at = end;
        if (first && t[0] == '#') break;  // a comment
        first = false;
        uint64_t v;
        if (!have_hash && parse_hex_hash(t, hash)) {
          have_hash = true;
        } else if (!have_id && parse_id(t, v)) {
          have_id = true;
          id = v;
        } else {
          return bad(line_no_, "expected a record ID and a 64-digit SHA-256 in hex, found '" + std::string(t) + "'");
        }
      }
      if (first) continue;  // blank, or a comment
      if (!have_hash) return bad(line_no_, "no 64-digit SHA-256 in hex");
      if (id != listed_)
        return bad(line_no_, "record " + std::to_string(id) + " where record " + std::to_string(listed_) +
                                 " was expected (IDs must run 0, 1, 2, ...)");
      ++listed_;
      return true;
    }
  }

  std::string path_;
  SideInput side_;
  std::vector<char> buf_;
  std::string pending_;  // read, from start_ on not yet taken
  size_t start_ = 0;
  bool eof_ = false;
  uint64_t line_no_ = 0;  // lines taken
  uint64_t listed_ = 0;   // digests taken
};

std::string describe(const VerifyReport& r) {
  return fmt::format("{}, {}, {} shard{}", r.schema.describe(), to_string(r.codec), r.data_shards,
                     r.data_shards == 1 ? "" : "s");
}

// One problem as a JSON object.
void problem_json(JsonWriter& j, const VerifyProblem& p) {
  j.begin_object();
  j.key("rule").value(p.rule);
  j.key("record");
  p.id ? j.value(*p.id) : j.null();
  j.key("file");
  p.shard ? j.value(data_file_name(*p.shard)) : j.null();
  j.key("offset");
  p.offset ? j.value(*p.offset) : j.null();
  j.key("message").value(redact_urls_in(p.message));
  j.end_object();
}

// What the report cannot vouch for, in one sentence with the flags that close the gap,
// or "" when nothing (the "not detectable:" line and the "not_detected" JSON key).
std::string blind_spot_text(const VerifyReport& r) {
  switch (r.blind_spot()) {
    case VerifyBlindSpot::kNone:
      return "";
    case VerifyBlindSpot::kPayloadsNotRead:
      return "payloads were not read (--quick): damage inside records is not detected";
    case VerifyBlindSpot::kRawPayloads:
      return "this raw store has no checksums: a bit flip inside a record's payload cannot be detected; keep "
             "per-record digests ('zrec digest --per-record STORE > sums') and check them with --against sums";
    case VerifyBlindSpot::kUnchecksummedFrames:
      return fmt::format(
          "{} of {} records carry no zstd content checksum: a bit flip that still decodes to the "
          "right length is not detected in them (write with --checksum, or check per-record "
          "digests with --against)",
          r.length - r.records_with_checksum, r.length);
  }
  return "";
}

// The JSON report of one store is written in pieces, so problems go out as they are
// found: json_begin opens it ("path", then the "problems" array), problem_json adds each
// problem, json_end closes the array and adds the rest.
void json_begin(JsonWriter& j, const std::string& path) {
  j.begin_object();
  j.key("path").value(redact_url(path));
  j.key("problems").begin_array();
}

void json_end(JsonWriter& j, const VerifyReport& r, const OutputPrefs& g) {
  j.end_array();
  j.key("valid").value(r.valid());
  j.key("quick").value(r.quick);
  j.key("opened").value(r.opened);
  j.key("writer_active").value(r.writer_active);
  if (r.opened) {
    write_schema(j, r.schema);
    j.key("codec").value(to_string(r.codec));
    j.key("shards").value(uint64_t{r.data_shards});
    j.key("length").value(r.length);
  }
  j.key("records_checked").value(r.records_checked);
  j.key("records_decoded").value(r.records_decoded);
  j.key("stored_bytes_read").value(r.stored_bytes_read);
  j.key("logical_bytes_decoded").value(r.logical_bytes);
  j.key("records_with_checksum").value(r.records_with_checksum);
  j.key("digests_compared").value(r.digests_compared);
  j.key("overlap_checked").value(r.overlap_checked);
  j.key("problem_count").value(r.problem_count);
  j.key("stopped_early").value(r.stopped_early);
  j.key("notes").begin_array();
  for (const auto& n : r.notes) j.value(n);
  j.end_array();
  j.key("not_detected").value(blind_spot_text(r));
  if (is_url(r.path)) write_remote_stats(j, g);
  j.end_object();
}

// One problem in the human report. Paths and messages are escaped as every message is
// (printable.h): a store named with a newline must not forge a line of the report.
std::string problem_text(const VerifyProblem& p, const std::string& path) {
  return fmt::format("{}: problem: {} [{}]\n", printable(redact_url(path)), printable(redact_urls_in(p.message)),
                     p.rule);
}

// The end of the human report of one store (its problems went out as found): notes,
// then one summary line.
std::string to_text(const VerifyReport& r, const std::string& path, const GlobalOptions& g) {
  const std::string name = printable(redact_url(path));
  std::string t;
  if (r.stopped_early)
    t += fmt::format("{}: stopped after {} problems (--max-errors); more may exist\n", name, r.problem_count);
  if (g.verbosity >= 0)
    for (const auto& n : r.notes) t += fmt::format("{}: note: {}\n", name, printable(n));
  const std::string what = r.opened ? describe(r) : "store-level check";
  if (!r.valid()) {
    t += fmt::format("{}: CORRUPT: {}{} problem{} ({}{})\n", name, r.stopped_early ? "at least " : "", r.problem_count,
                     r.problem_count == 1 ? "" : "s", what, r.opened ? fmt::format(", {} records", r.length) : "");
    return t;
  }
  if (g.verbosity < 0) return t;
  std::string checked;
  if (r.quick) {
    checked = "structure checked (--quick: payloads not read)";
  } else {
    checked = fmt::format("every record read and decoded ({})", format_bytes(double(r.logical_bytes)));
    if (r.codec != Codec::kRaw)
      checked += fmt::format("; {} of {} frames carry a content checksum", r.records_with_checksum, r.length);
    if (r.digests_compared > 0) checked += fmt::format("; {} digests match", r.digests_compared);
  }
  t += fmt::format("{}: OK: {} records ({}); {}\n", name, r.length, what, checked);
  if (r.writer_active)
    t += fmt::format("{}: a writer is appending; this is its last published state (the records checked)\n", name);
  const std::string blind = blind_spot_text(r);
  if (!blind.empty()) t += fmt::format("{}: not detectable: {}\n", name, blind);
  return t;
}

// Verifies one store, handing each problem to on_problem as it is found (none are
// kept: memory stays bounded however many there are).
Result<VerifyReport> verify_one(const std::string& path, const VerifyArgs& a, const GlobalOptions& g,
                                RecordDigests* against, const std::function<Status(const VerifyProblem&)>& on_problem) {
  ProgressMeter meter(g, "verify " + path);
  VerifyOptions o;
  o.keep_problems = 0;
  o.quick = a.quick;
  o.max_errors = a.max_errors;
  Context ctx = g.read_context(path);
  ctx.snapshot_if_busy = !g.wait;  // while a writer appends: its last published state
  o.against = against;
  ctx.control.progress = [&](const Progress& p) {
    // The table pass is quick next to the payload pass; show it only when it is all.
    if (!a.quick && std::string_view(p.phase) == "table") return;
    meter.set_total_records(p.total_records);
    meter.update(p.records, p.bytes);
  };
  o.on_problem = [&](const VerifyProblem& p) {
    Status s;
    meter.print_above([&] { s = on_problem(p); });
    return s;
  };
  auto r = verify_store(path, o, ctx);
  meter.finish();
  if (!r.is_ok() && r.status().code() == StatusCode::kCancelled)
    return cancelled("interrupted; '" + path + "' was not changed (verify only reads)");
  return r;
}

// One store: its report streamed to `out` as its problems are found.
Status verify_single(const VerifyArgs& a, const GlobalOptions& g, Output& out) {
  // Opened (or refused) before any check; read as the payload pass reaches its records.
  std::unique_ptr<DigestFile> digests;
  if (!a.against.empty()) {
    if (a.quick) throw UsageError("--against compares payloads; it can't be combined with --quick");
    ZREC_ASSIGN_OR_RETURN(digests, DigestFile::open(a.against));
  }
  JsonWriter j;
  if (a.json) json_begin(j, a.path);
  bool streamed = false;  // some of the report went out
  auto r = verify_one(a.path, a, g, digests.get(), [&](const VerifyProblem& p) {
    streamed = true;
    if (!a.json) return out.write(problem_text(p, a.path));
    problem_json(j, p);
    return out.write(j.take());
  });
  if (!r.is_ok()) {
    // Problems already printed stay valid output (a malformed --against line is found
    // after them): close the JSON object, naming the error.
    if (a.json && streamed) {
      j.end_array().key("error").value(r.status().message()).end_object();
      (void)out.write(j.take() + "\n");
    }
    (void)out.flush();
    return r.status();
  }
  if (a.json) {
    json_end(j, *r, g);
    ZREC_RETURN_IF_ERROR(out.write(j.take() + "\n"));
  } else {
    ZREC_RETURN_IF_ERROR(out.write(to_text(*r, redact_url(a.path), g)));
  }
  ZREC_RETURN_IF_ERROR(out.flush());
  if (r->valid()) return Status::ok();
  return malformed(fmt::format("'{}' is corrupt: {}{} problem{}", a.path, r->stopped_early ? "at least " : "",
                               r->problem_count, r->problem_count == 1 ? "" : "s"));
}

// The stores of a directory, each verified and reported in turn.
struct StreamReports {
  std::vector<VerifyReport> reports;
  std::map<std::string, uint64_t> lengths;  // of the stores that opened, by name
  Status unreadable;                        // the first stream that could not be checked
};

// Verifies each of `names` under a.path, its report written to `out` (JSON: into `j`'s
// "streams" object, open). Only an interrupt ends it early.
Status verify_streams(const VerifyArgs& a, const GlobalOptions& g, const std::vector<std::string>& names, Output& out,
                      JsonWriter& j, StreamReports& done) {
  for (const auto& name : names) {
    const std::string path = join_path(a.path, name);
    if (a.json) {
      j.key(name);
      json_begin(j, path);
    }
    auto r = verify_one(path, a, g, nullptr, [&](const VerifyProblem& p) {
      if (!a.json) return out.write(problem_text(p, path));
      problem_json(j, p);
      return out.write(j.take());
    });
    if (!r.is_ok()) {
      if (r.status().code() == StatusCode::kCancelled) return r.status();
      if (done.unreadable.is_ok()) done.unreadable = r.status();
      if (a.json) j.end_array().key("error").value(r.status().message()).end_object();
      else
        ZREC_RETURN_IF_ERROR(out.write(fmt::format("{}: cannot check: {}\n", printable(redact_url(path)),
                                                   printable(redact_urls_in(r.status().message())))));
      continue;
    }
    if (a.json) json_end(j, r.value(), g);
    else ZREC_RETURN_IF_ERROR(out.write(to_text(r.value(), redact_url(path), g)));
    if (r->opened) done.lengths[name] = r->length;
    done.reports.push_back(std::move(r).value());
  }
  return Status::ok();
}

// What a root's marker says of its streams, besides each stream's own report.
struct RootFindings {
  std::vector<RootProblem> problems;     // lengths that disagree with the committed samples
  std::vector<RootNote> unadopted;       // stores the marker does not list yet
  std::vector<std::string> temporaries;  // what killed writers left
  std::string text;                      // their lines in the human report
};

RootFindings check_root(const std::string& path, const std::optional<Dataset>& root,
                        const std::map<std::string, uint64_t>& lengths) {
  RootFindings f;
  // Lengths are compared only in a root append-tar marked, against what it committed:
  // the stores of any other directory are unrelated.
  if (root) f.problems = root_problems(*root, lengths);
  for (const auto& p : f.problems)
    f.text += fmt::format("{}: problem: {} [{}]\n", printable(redact_url(path)), redact_urls_in(p.text), p.key);
  // Stores the marker does not list yet (a stream made for zrec adopt): the committed
  // samples are whole, so the root stays valid.
  if (root) f.unadopted = unadopted_notes(*root, lengths);
  for (const auto& n : f.unadopted)
    f.text += fmt::format("{}: note: {}\n", printable(redact_url(path)), redact_urls_in(n.text));
  // What killed writers left in the root: no problem of its data, but space and clutter
  // that only a writer of the root takes away (a live writer's, while it works, too).
  if (root && !is_url(path)) f.temporaries = root_temporaries(path);
  for (const auto& name : f.temporaries)
    f.text += fmt::format(
        "{}: note: '{}' is a temporary of a writer of the root, killed (or at work now); the next writer of the "
        "root removes it\n",
        printable(path), printable(name));
  return f;
}

// The directory's JSON object after its "streams": the root's findings, the verdict.
void directory_json(JsonWriter& j, const std::string& path, const std::optional<Dataset>& root, const RootFindings& f,
                    bool valid, const OutputPrefs& g) {
  j.key("marked").value(root.has_value());
  if (root) {
    j.key("committed_length").value(root->length()).key("lengths_agree").value(f.problems.empty());
    j.key("root_problems").begin_array();
    for (const auto& p : f.problems)
      j.begin_object().key("rule").value(p.key).key("text").value(redact_urls_in(p.text)).end_object();
    j.end_array().key("temporaries").begin_array();
    for (const auto& name : f.temporaries) j.value(name);
    j.end_array().key("unadopted").begin_array();
    for (const auto& n : f.unadopted) j.value(n.name);
    j.end_array();
  }
  j.key("valid").value(valid);
  if (is_url(path)) write_remote_stats(j, g);
  if (root) j.key("length").value(root->length());  // the root's samples, last (scripts read the last "length")
  j.end_object();
}

// A directory of stores: verify each; in a root, check them against its commit.
Status verify_directory(const VerifyArgs& a, const GlobalOptions& g, const std::vector<std::string>& names,
                        const std::optional<Dataset>& root, Output& out) {
  if (!a.against.empty()) throw UsageError("--against takes one store, not a directory of streams");
  StreamReports done;
  JsonWriter j;
  j.begin_object().key("path").value(redact_url(a.path)).key("streams").begin_object();
  ZREC_RETURN_IF_ERROR(verify_streams(a, g, names, out, j, done));
  j.end_object();
  uint64_t corrupt = 0;
  for (const auto& r : done.reports) corrupt += r.valid() ? 0 : 1;
  RootFindings f = check_root(a.path, root, done.lengths);
  const bool valid = corrupt == 0 && f.problems.empty() && done.unreadable.is_ok();
  directory_json(j, a.path, root, f, valid, g);
  const std::string kind = root ? "stream" : "store";
  if (a.json) {
    ZREC_RETURN_IF_ERROR(out.write(j.take() + "\n"));
  } else {
    std::string& text = f.text;  // the lines after the streams' own
    if (valid && g.verbosity >= 0)
      text += root ? fmt::format("{}: OK: {} streams of {} records each\n", printable(redact_url(a.path)),
                                 names.size() - f.unadopted.size(), root->length())
                   : fmt::format("{}: OK: {} stores, each valid ({})\n", printable(redact_url(a.path)), names.size(),
                                 unmarked_note(names.size()));
    if (!root && g.verbosity >= 0 && !valid)
      text += fmt::format("{}: {}\n", printable(redact_url(a.path)), unmarked_note(names.size()));
    ZREC_RETURN_IF_ERROR(out.write(text));
  }
  ZREC_RETURN_IF_ERROR(out.flush());
  if (corrupt > 0 || !f.problems.empty())
    return malformed(
        fmt::format("'{}' is corrupt: {} of {} {}s have problems{}", a.path, corrupt, names.size(), kind,
                    f.problems.empty() ? "" : ", and the streams do not match the root's committed samples"));
  return done.unreadable;
}

Status run_verify(const VerifyArgs& a, const GlobalOptions& g) {
  InterruptScope interrupts;
  struct stat st;
  const bool remote = is_url(a.path);
  if (!remote && ::stat(a.path.c_str(), &st) != 0) return io::errno_status(errno, "cannot open", a.path);
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));

  // A directory without meta.zr whose subdirectories are stores holds named streams (a
  // root, when append-tar marked it) or unrelated stores; anything else is checked as
  // one store (which may have lost its meta.zr).
  std::vector<std::string> names;
  std::optional<Dataset> root;  // a marked root
  if ((remote || S_ISDIR(st.st_mode)) && !is_store_dir(a.path, g.read_context(a.path))) {
    ZREC_ASSIGN_OR_RETURN(Dataset ds, Dataset::open(a.path, {}, g.read_context(a.path)));
    names = ds.stores();
    if (ds.marked()) root = std::move(ds);
  }
  if (names.empty() && !root) return verify_single(a, g, out);
  return verify_directory(a, g, names, root, out);
}

// 0 valid; 1 corrupt; 2 the store could not be checked (or a usage error, app.cc); 75
// a store busy with another process; 128+N on a signal.
int verify_exit_code(const Status& s) {
  if (s.is_ok()) return kExitOk;
  if (s.code() == StatusCode::kMalformed) return kExitFailure;
  if (s.code() == StatusCode::kCancelled) return interrupt_exit_code();
  if (s.code() == StatusCode::kBusy) return kExitBusy;
  return kExitUsage;
}

}  // namespace

Command register_verify(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<VerifyArgs>();
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = root.add_subcommand("verify", "Check stores against every rule of the format, and their payloads");
  cmd->add_option("store", *paths,
                  "Stores, or directories whose subdirectories are stores (named streams); each gets its own "
                  "verdict, and the exit status is the worst")
      ->required();
  cmd->add_flag("--quick", args->quick, "Check the page, the record table and overlaps only; read no payloads");
  cmd->add_flag("--json", args->json, "Print one JSON object on stdout, one line per path (keys in man zrec-verify)");
  cmd->add_option("--max-errors", args->max_errors, "Stop after N problems; 0 never stops early")
      ->capture_default_str();
  cmd->add_option("--against", args->against,
                  "Per-record SHA-256 file from 'zrec digest --per-record' (or -): report every record "
                  "whose bytes changed");
  return Command{cmd,
                 [args, paths, &global]() {
                   if (!args->against.empty() && paths->size() > 1)
                     throw UsageError("--against checks one store: give one path");
                   return for_each_path_of(
                       "verify", *args, *paths, [&](const VerifyArgs& one) { return run_verify(one, global); },
                       verify_exit_code);
                 },
                 verify_exit_code, [] { return true; }};
}

}  // namespace zrec::cli
