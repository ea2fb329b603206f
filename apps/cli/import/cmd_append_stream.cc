// zrec append-stream: records from a byte stream on stdin (or -i FILE): newline- or
// NUL-separated records of bytes, length-prefixed binary frames, or lines of numbers
// parsed into records of the store's numeric dtype.
//
// Performance note: without --parse, lines and NUL-separated records are cut where
// they lie: in a regular file's mapping, or in the append window that large reads fill
// (delimited_records.h); the window's budget bounds memory however long the stream is.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <optional>

#include <CLI/CLI.hpp>

#include "zrec/dataset.h"
#include "zrec/format.h"

#include "cli/app/command.h"
#include "cli/formats/text_numbers.h"
#include "cli/import/append_command.h"
#include "cli/import/append_session.h"
#include "cli/import/delimited_records.h"
#include "cli/import/frame_reader.h"
#include "cli/import/json_root_append.h"
#include "cli/options/option_choices.h"
#include "cli/options/usage_error.h"
#include "cli/report/console.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

namespace {

enum class InputFraming { kLines, kNul, kU32, kU64 };

struct AppendStreamArgs {
  std::string store;
  std::string input = "-";
  std::string framing = "lines";
  std::vector<std::string> parse;  // a store: one of ints, floats; a root: STREAM=HOW each
  bool skip_empty = false;
  AppendArgs append;
};

// What append-stream is to `zrec --help`, and its STORE operand.
constexpr AppendCommandForm kAppendStream{
    .name = "append-stream",
    .about = "Append records read from a stream: lines, NUL-separated or length-prefixed",
    .store = "Store to append to; or a root, fed JSON lines (one object per sample)"};

// Streamed reads ask for at least this much room.
constexpr uint64_t kReadBytes = uint64_t{1} << 20;

std::string input_label(const io::InputStream& in) { return in.name() == "-" ? "stdin" : "'" + in.name() + "'"; }

// --parse: each line (or NUL-separated frame) of numbers is one record: Ragged 1-D of
// as many numbers as the line holds, or Dense of exactly the item's count (one for a
// scalar store: a label per line).
Status read_numbers(io::InputStream& in, AppendSession& s, const std::string& store, InputFraming framing,
                    NumberSyntax syntax, bool skip_empty) {
  const DType& dtype = s.schema().dtype;
  const bool dense = s.schema().is_dense();
  uint64_t dense_count = 1;
  if (dense)
    for (uint64_t d : *s.schema().item_shape) dense_count *= d;
  const std::string unit = framing == InputFraming::kLines ? "line" : "record";
  FrameReader reader(in, framing == InputFraming::kLines ? '\n' : '\0');
  uint64_t counted = 0;          // reader.consumed() reported to the session
  std::vector<uint8_t> present;  // a skipped line's numbers, to compare
  for (uint64_t number = 1;; ++number) {
    ZREC_RETURN_IF_ERROR(s.check_interrupt());
    auto frame = reader.next();
    if (!frame.is_ok()) return frame.status().with_context(input_label(in) + " " + unit + " " + std::to_string(number));
    if (!frame.value()) return Status::ok();
    const std::string_view text = *frame.value();
    s.count_input(reader.consumed() - counted);
    counted = reader.consumed();
    const auto where = [&] { return input_label(in) + " " + unit + " " + std::to_string(number); };
    uint64_t count = count_number_tokens(text);
    if (count == 0) {
      if (skip_empty) continue;
      return invalid_argument(where() + " has no numbers (records are nonempty; --skip-empty drops such lines)");
    }
    if (dense && count != dense_count)
      return invalid_argument(where() + " holds " + std::to_string(count) + (count == 1 ? " number" : " numbers") +
                              "; each record of '" + store + "' (" + s.schema().describe() + ") is exactly " +
                              std::to_string(dense_count) + (dense_count == 1 ? " number" : " numbers"));
    const bool skip = s.skip_record();
    if (skip && !s.compares_skipped(true)) continue;
    const Result<uint64_t> parsed = parsed_record_bytes(count, dtype);
    if (!parsed.is_ok()) return parsed.status().with_context(where());
    const uint64_t bytes = parsed.value();
    if (skip) {  // parsed to compare with the stored record
      present.resize(bytes);
      ZREC_RETURN_IF_ERROR(parse_numbers(text, syntax, dtype, present.data()).with_context(where()));
      ZREC_RETURN_IF_ERROR(s.compare_skipped(present, dense ? nullptr : &count, where()));
      continue;
    }
    ZREC_RETURN_IF_ERROR(s.reserve(1, bytes).status());
    ZREC_RETURN_IF_ERROR(parse_numbers(text, syntax, dtype, s.next_payload()).with_context(where()));
    ZREC_RETURN_IF_ERROR(s.add(bytes, dense ? nullptr : &count));
  }
}

// u32le / u64le: a little-endian length, then that many bytes, per record.
Status read_length_prefixed(io::InputStream& in, AppendSession& s, InputFraming framing, bool skip_empty) {
  const size_t width = framing == InputFraming::kU32 ? 4 : 8;
  for (uint64_t number = 1;; ++number) {
    ZREC_RETURN_IF_ERROR(s.check_interrupt());
    const uint64_t start = in.position();
    const auto where = [&] {
      return input_label(in) + " frame " + std::to_string(number) + " (at byte " + std::to_string(start) + ")";
    };
    uint8_t prefix[8];
    ZREC_ASSIGN_OR_RETURN(size_t got, in.read_full(prefix, width));
    if (got == 0) return Status::ok();
    if (got < width)
      return invalid_argument("truncated input: " + where() + ": the input ends inside its " + std::to_string(width) +
                              "-byte length");
    uint64_t length = 0;  // u32le or u64le
    for (size_t i = 0; i < width; ++i) length |= uint64_t{prefix[i]} << (8 * i);
    s.count_input(width);
    if (length == 0) {
      if (skip_empty) continue;
      return invalid_argument(where() + " is empty (records are nonempty; --skip-empty drops empty ones)");
    }
    if (length > kMaxRagged1dPayloadBytes)
      return invalid_argument(where() + " declares " + std::to_string(length) + " bytes; a record holds at most " +
                              std::to_string(kMaxRagged1dPayloadBytes));
    auto truncated = [&](uint64_t have) {
      return invalid_argument("truncated input: " + where() + " declares " + std::to_string(length) +
                              " bytes, but the input ends after " + std::to_string(have));
    };
    const bool skip = s.skip_record();
    if (skip && !s.compares_skipped(!in.seeks())) {  // passed over unread: a seek in a file
      ZREC_ASSIGN_OR_RETURN(uint64_t n, in.skip(length));
      s.count_input(n);
      if (n < length) return truncated(n);
      continue;
    }
    // The length is only a claim until the bytes arrive: read them into streamed window
    // space, which grows geometrically with what was read (never zero-filled to the claim).
    for (uint64_t have = 0; have < length;) {
      ZREC_ASSIGN_OR_RETURN(std::span<uint8_t> space, s.input_space(std::min(length - have, kReadBytes)));
      ZREC_ASSIGN_OR_RETURN(size_t n, in.read_some(space.data(), std::min<uint64_t>(space.size(), length - have)));
      if (n == 0) return truncated(have);
      s.input_written(n);
      have += n;
    }
    if (skip) {
      ZREC_RETURN_IF_ERROR(s.compare_skipped(s.pending().first(length), &length, where()));
      ZREC_RETURN_IF_ERROR(s.drop(length));
      continue;
    }
    ZREC_RETURN_IF_ERROR(s.cut(length, 0, &length));
  }
}

Status run_append_stream(const AppendStreamArgs& a, const GlobalOptions& g) {
  // A root (its zrec-root marker): JSON lines, one object per sample.
  if (const auto ds = Dataset::open(a.store); ds.is_ok() && ds->marked()) {
    if (a.framing != "lines") throw UsageError("--framing: a root reads JSON lines only");
    return append_json_to_root(a.store, a.input, a.parse, a.skip_empty, a.append, g);
  }
  if (a.parse.size() > 1) throw UsageError("--parse: a store takes one of ints or floats (STREAM=HOW is for a root)");
  // framing_names() and number_syntax_names() are in the order of their enums.
  const auto framing = static_cast<InputFraming>(choose(framing_names(), "--framing", a.framing));
  std::optional<NumberSyntax> syntax;
  if (!a.parse.empty()) syntax = static_cast<NumberSyntax>(choose(number_syntax_names(), "--parse", a.parse.front()));
  if (syntax && (framing == InputFraming::kU32 || framing == InputFraming::kU64))
    throw UsageError("--parse reads text: use it with --framing lines or nul");
  if (a.input == "-" && stdin_is_terminal())
    throw UsageError("refusing to read records from a terminal (pipe them in, or use -i FILE)");

  ZREC_ASSIGN_OR_RETURN(auto in, io::InputStream::open(a.input, g.context(Work::kWrite).control));
  ZREC_ASSIGN_OR_RETURN(auto session, AppendSession::open("append-stream", a.store, a.append, g));
  // Everything past this point ends in finish(), which reports interruptions.
  Status s = [&]() -> Status {
    const Schema& schema = session->schema();
    if (syntax && schema.is_dense()) {
      // Dense: a fixed count of numbers per line (a label per line for a scalar store).
    } else if (schema.is_dense() || schema.ndim != 1) {
      const std::string dtype = syntax ? (syntax == NumberSyntax::kInts ? "'<i8'" : "'<f4'") : "'|u1'";
      return invalid_argument(
          "the store must be Ragged with ndim 1" + std::string(syntax ? " or Dense" : "") + ", but '" + a.store +
          "' is " + schema.describe() +
          (syntax ? " (for one number per line, e.g. labels: zrec create --dense --shape scalar --dtype " + dtype +
                        " STORE; for lines of any length: zrec create --ragged --ndim 1 --dtype " + dtype + " STORE)"
                  : " (make one with: zrec create --ragged --ndim 1 --dtype '|u1' STORE)"));
    }
    if (syntax) {
      ZREC_RETURN_IF_ERROR(check_number_dtype(*syntax, schema.dtype));
    } else if (schema.dtype.str() != "|u1") {
      return invalid_argument("records of bytes need a store of dtype '|u1', but '" + a.store + "' is " +
                              schema.describe() + " (for lines of numbers, use --parse ints or --parse floats)");
    }

    struct stat st {};
    if (::fstat(in.fd(), &st) == 0) {
      if (S_ISREG(st.st_mode)) {
        const off_t at = ::lseek(in.fd(), 0, SEEK_CUR);
        if (at >= 0 && st.st_size > at) session->progress().set_total_bytes(static_cast<uint64_t>(st.st_size - at));
      } else if (S_ISFIFO(st.st_mode)) {
        // Performance note: a 1 MiB pipe (Linux's default is 64 KiB) lets each read(2)
        // take 16 times as much; best effort, as the limit may be lower.
        (void)::fcntl(in.fd(), F_SETPIPE_SZ, 1 << 20);
      }
    }
    if (syntax) return read_numbers(in, *session, a.store, framing, *syntax, a.skip_empty);
    if (framing == InputFraming::kLines || framing == InputFraming::kNul) {
      const bool lines = framing == InputFraming::kLines;
      return read_delimited_records(in, *session,
                                    {.delimiter = lines ? '\n' : '\0',
                                     .unit = lines ? "line" : "record",
                                     .label = input_label(in),
                                     .skip_empty = a.skip_empty,
                                     .may_map = a.append.checkpoint_every == 0});
    }
    return read_length_prefixed(in, *session, framing, a.skip_empty);
  }();
  return session->finish(std::move(s));
}

// append-stream's own options, between STORE and the options every append takes.
void add_stream_options(CLI::App* cmd, AppendStreamArgs& a) {
  cmd->add_option("-i,--input", a.input, "Read this file instead of stdin (- for stdin)")->capture_default_str();
  offer_choices(cmd->add_option("--framing", a.framing,
                                "How records are delimited: lines (newline-terminated; the newline is dropped, a CR "
                                "kept), nul (NUL-terminated), u32le or u64le (a little-endian length, then the bytes)")
                    ->capture_default_str(),
                framing_names());
  offer_choices(
      cmd->add_option("--parse", a.parse,
                      "ints or floats: each line is whitespace-separated numbers, stored as one record of "
                      "the store's dtype: Ragged 1-D (any count), or Dense (exactly the item's count: one "
                      "per line for a scalar store of labels). A root: STREAM=text|bytes|int|float|ints|floats "
                      "for each stream whose values are not what its schema implies")
          ->delimiter(',')
          ->allow_extra_args(false),
      number_syntax_names());
  cmd->add_flag("--skip-empty", a.skip_empty, "Drop empty lines and frames instead of failing (records are nonempty)");
}

}  // namespace

Command register_append_stream(CLI::App& root, const GlobalOptions& global) {
  return register_append(root, global, kAppendStream, add_stream_options, run_append_stream);
}

}  // namespace zrec::cli
