// The shared core of the append-* commands (see append_session.h).
#include "cli/import/append_session.h"

#include <algorithm>
#include <cstdio>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "cli/formats/printable.h"
#include "cli/import/resume_file.h"
#include "cli/options/json_option.h"
#include "cli/options/level_option.h"
#include "cli/options/usage_error.h"
#include "cli/options/window_option.h"
#include "cli/report/codec_choice_report.h"

namespace zrec::cli {

void add_append_options(CLI::App* cmd, AppendArgs& args, const std::string& unit) {
  add_window_mib_option(cmd, args.window_mib, "append window");
  cmd->add_option("--checkpoint-every", args.checkpoint_every,
                  "Publish every N records, so an interruption or crash loses at most the records "
                  "after the last checkpoint; 0 publishes once, at the end")
      ->capture_default_str();
  cmd->add_option("--skip-first", args.skip_first,
                  "Skip the first N " + unit +
                      " of the input, whatever the store holds (to resume, --from-length is the safer choice)")
      ->capture_default_str();
  auto* from_length = cmd->add_option(
      "--from-length", args.from_length,
      "The input begins at " + std::string(unit == "samples" ? "sample N of the root" : "record N of the store") +
          ": the " + unit +
          " the store holds past N are skipped, not appended again, so the same "
          "command run again after a failure or kill appends each once (fails if it holds fewer than N)");
  cmd->add_option("--resume-file", args.resume_file,
                  "--from-length kept in FILE: a first run writes the " + unit +
                      " the store holds into FILE, every rerun reads it back, so a whole script rerun after a kill, "
                      "or after it completed, appends each of the input's " +
                      unit +
                      " once (FILE stays; remove it "
                      "to append the input again)")
      ->excludes(from_length);
  cmd->add_option("--expect-length", args.expect_length,
                  "Fail (exit 1, nothing changed) unless the store holds exactly N " + unit + " before appending");
  auto* checksum = cmd->add_flag_callback(
      "--checksum", [&args] { args.checksum = true; },
      "zstd frames get a content checksum (default: as the store's records, "
      "or as create --checksum set it)");
  cmd->add_flag_callback(
         "--no-checksum", [&args] { args.checksum = false; }, "zstd frames get no content checksum")
      ->excludes(checksum);
  cmd->add_flag("--require-records", args.require_records,
                "Fail (exit 1, the store unchanged) when the input holds no record to append");
  add_json_flag(cmd, args.json, "instead of the summary line");
  add_level_option(cmd, args.level, "zstd level of the appended records (the store's earlier records keep theirs)",
                   "the format's: 3, or 15 with a dictionary");
}

void add_check_present_options(CLI::App* cmd, AppendArgs& args) {
  auto* check_present = cmd->add_flag_callback(
      "--check-present", [&args] { args.check_present = true; },
      "With --from-length, compare every record found already present with the stored one, also where that means "
      "reading what a seek would skip "
      "(default: where the input is read anyway, as from a pipe)");
  cmd->add_flag_callback(
         "--no-check-present", [&args] { args.check_present = false; },
         "With --from-length, skip the records found already present without comparing them")
      ->excludes(check_present);
}

Status check_start_length(const AppendArgs& args, uint64_t length, const std::string& where, const std::string& unit) {
  if (args.expect_length && length != *args.expect_length)
    return invalid_argument(where + " holds " + std::to_string(length) + " " + unit + ", not the " +
                            std::to_string(*args.expect_length) +
                            " that --expect-length expects; nothing was appended");
  if (args.from_length && length < *args.from_length)
    return invalid_argument(where + " holds " + std::to_string(length) + " " + unit + ", fewer than --from-length " +
                            std::to_string(*args.from_length) + ": " + unit +
                            " before this input's first are missing, or it is not the store this input belongs "
                            "to; nothing was appended");
  return Status::ok();
}

Status apply_resume_file(AppendArgs& args, uint64_t length, const std::string& store) {
  if (args.resume_file.empty()) return Status::ok();
  ZREC_ASSIGN_OR_RETURN(const uint64_t from, resume_from(args.resume_file, length, store));
  args.from_length = from;
  return Status::ok();
}

uint64_t records_to_skip(const AppendArgs& args, uint64_t length) {
  const uint64_t present = args.from_length ? length - *args.from_length : 0;
  return args.skip_first > UINT64_MAX - present ? UINT64_MAX : args.skip_first + present;
}

std::string resume_hint(const AppendArgs& args, uint64_t first_length, uint64_t holds) {
  // Where this input begins in the store: what the command line said, or the length
  // the store had when this run took its lock.
  const uint64_t origin = args.from_length.value_or(first_length);
  if (holds <= origin && args.skip_first == 0) return "";
  if (!args.resume_file.empty())
    return " (resume: the same command; resume file '" + args.resume_file + "' holds where its input begins, " +
           std::to_string(origin) + ")";
  return " (resume: the same command with --from-length " + std::to_string(origin) + ")";
}

Status run_failed(const Status& s, const AppendArgs& args, const std::string& where, const char* unit,
                  uint64_t first_length, uint64_t holds) {
  const std::string resume = resume_hint(args, first_length, holds);
  const std::string held = where + " holds " + std::to_string(holds) + " " + unit;
  if (s.code() == StatusCode::kCancelled || interrupted()) return cancelled("interrupted; " + held + resume);
  if (holds > first_length) return Status(s.code(), s.message() + "; " + held + ", as of the last checkpoint" + resume);
  return s;
}

std::string skipped_words(uint64_t by_skip_first, uint64_t present) {
  if (by_skip_first > 0 && present > 0)
    return " after skipping " + std::to_string(by_skip_first) + " (--skip-first) and " + std::to_string(present) +
           " already present";
  if (present > 0) return " after skipping " + std::to_string(present) + " already present";
  if (by_skip_first > 0) return " after skipping " + std::to_string(by_skip_first);
  return "";
}

Status input_too_short(const AppendArgs& args, uint64_t first_length, uint64_t skipped, const std::string& where,
                       const std::string& unit) {
  const uint64_t present = first_length - *args.from_length;
  const uint64_t got = skipped - std::min(skipped, args.skip_first);
  return invalid_argument("the input holds " + std::to_string(got) + " " + unit +
                          (args.skip_first > 0 ? " after --skip-first" : "") + ", but " + where + " holds " +
                          std::to_string(present) + " past --from-length " + std::to_string(*args.from_length) +
                          ": this is not the input it holds, or not the store this input belongs to; nothing was "
                          "appended");
}

Result<std::unique_ptr<AppendSession>> AppendSession::open(const std::string& command, const std::string& store,
                                                           const AppendArgs& args, const GlobalOptions& global,
                                                           WriterOptions options) {
  if (!options.checksum) options.checksum = args.checksum;
  if (options.level == 0) options.level = args.level;
  std::unique_ptr<StoreWriter> writer;
  {
    InterruptScope during_lock_wait;  // --wait ends on SIGINT/SIGTERM: 130/143
    ZREC_ASSIGN_OR_RETURN(writer, StoreWriter::open(store, options, global.context(Work::kWrite)));
  }
  if (options.level != 0 && writer->codec() == Codec::kRaw)
    throw UsageError("--level is for zstd and zstd_dict; '" + store + "' is a raw store");
  // The length, read under the lock: nothing can change it before this run publishes.
  AppendArgs resolved = args;
  ZREC_RETURN_IF_ERROR(apply_resume_file(resolved, writer->length(), store));
  ZREC_RETURN_IF_ERROR(check_start_length(resolved, writer->length(), "'" + store + "'", "records"));
  return std::unique_ptr<AppendSession>(new AppendSession(command, store, resolved, global, std::move(writer)));
}

AppendSession::AppendSession(const std::string& command, const std::string& store, const AppendArgs& args,
                             const GlobalOptions& global, std::unique_ptr<StoreWriter> writer)
    : store_(store),
      args_(args),
      window_bytes_(args.window_mib << 20),
      checkpoint_every_(args.checkpoint_every),
      skip_option_(args.skip_first),
      require_records_(args.require_records),
      report_(command, global, args.json),
      writer_(std::move(writer)),
      expansion_(store, false, [this](const std::string& message) { warn(message); }),
      window_(*writer_, window_bytes_),
      meter_(global, command) {
  window_.set_expansion_check(&expansion_);
  first_id_ = writer_->length();
  first_stored_ = writer_->stored_bytes();
  skip_first_ = records_to_skip(args, first_id_);
  // The common keys first, in this order; finish() fills in their values.
  report_.set("path", store_).set("records_appended", uint64_t{0}).set("records_skipped", uint64_t{0});
  report_.set("records_present", uint64_t{0}).set("records_compared", uint64_t{0});
  report_.set("bytes_in", uint64_t{0}).set("stored_bytes", uint64_t{0}).set("length", first_id_);
}

AppendSession::~AppendSession() {
  if (finished_) return;
  meter_.finish();
  (void)window_.wait();  // the write thread may be appending
  writer_->abort();
  if (listener_.rollback) listener_.rollback();
}

Status AppendSession::check_interrupt() const {
  if (interrupted()) return cancelled("interrupted");
  return Status::ok();
}

Status AppendSession::checkpoint() {
  ZREC_RETURN_IF_ERROR(window_.flush());
  // A signal that arrived meanwhile wins: nothing more is published.
  ZREC_RETURN_IF_ERROR(check_interrupt());
  if (listener_.prepare) ZREC_RETURN_IF_ERROR(listener_.prepare());
  const uint64_t before = writer_->published_length();
  const Status published = writer_->publish();
  commit_if_published(before);
  ZREC_RETURN_IF_ERROR(published);
  since_checkpoint_ = 0;
  spdlog::debug("checkpoint: '{}' holds {} records", store_, writer_->published_length());
  return Status::ok();
}

Result<uint64_t> AppendSession::reserve(uint64_t count, uint64_t bytes_each) {
  ZREC_RETURN_IF_ERROR(check_interrupt());
  return window_.reserve(std::min(count, room_before_checkpoint()), bytes_each);
}

Status AppendSession::add(uint64_t bytes, const uint64_t* dims) {
  window_.add(bytes, dims);
  return after_records(1);
}

Result<std::span<uint8_t>> AppendSession::input_space(uint64_t min_bytes) {
  ZREC_RETURN_IF_ERROR(check_interrupt());
  return window_.input_space(min_bytes);
}

Status AppendSession::append(std::span<const RecordRef> records) { return append_batch(records, false); }

Status AppendSession::append_behind(std::span<const RecordRef> records) { return append_batch(records, true); }

Status AppendSession::append_behind(PackedRecords& records) {
  if (records.size() == 0) return Status::ok();
  ZREC_RETURN_IF_ERROR(check_batch(records.size()));
  ZREC_RETURN_IF_ERROR(window_.append_behind(records));
  return after_records(records.size());
}

Status AppendSession::check_batch(uint64_t n) {
  ZREC_RETURN_IF_ERROR(check_interrupt());
  if (n > room_before_checkpoint()) return invalid_argument("internal: a batch of records crosses a checkpoint");
  return Status::ok();
}

Status AppendSession::append_batch(std::span<const RecordRef> records, bool behind) {
  if (records.empty()) return Status::ok();
  ZREC_RETURN_IF_ERROR(check_batch(records.size()));
  // After the window's records: input order is kept if a command mixes both ways.
  ZREC_RETURN_IF_ERROR(behind ? window_.append_behind(records) : window_.append(records));
  return after_records(records.size());
}

Status AppendSession::compare_skipped(std::span<const uint8_t> payload, const uint64_t* dims,
                                      const std::string& where) {
  const uint64_t present = skipped_ - skip_option_;  // this one included
  if (!present_check_) {
    ZREC_ASSIGN_OR_RETURN(present_check_,
                          PresentCheck::open(store_, *args_.from_length, first_id_ - *args_.from_length));
  }
  ZREC_RETURN_IF_ERROR(present_check_->expect(*args_.from_length + present - 1, payload, dims, where));
  ++compared_;
  return Status::ok();
}

Status AppendSession::compare_skipped_size(uint64_t bytes, const std::string& where) {
  const uint64_t present = skipped_ - skip_option_;  // this one included
  if (!present_check_) {
    ZREC_ASSIGN_OR_RETURN(present_check_,
                          PresentCheck::open(store_, *args_.from_length, first_id_ - *args_.from_length));
  }
  return present_check_->expect_size(*args_.from_length + present - 1, bytes, where);
}

void AppendSession::warn(const std::string& message) {
  meter_.print_above([&] { spdlog::warn("{}", message); });
}

Status AppendSession::finish(Status input) {
  Status s = std::move(input);
  if (s.is_ok()) s = check_interrupt();
  if (s.is_ok()) s = window_.flush();
  if (s.is_ok()) s = check_interrupt();
  // --from-length said the store holds records of this input that it does not have.
  if (s.is_ok() && args_.from_length && skipped_ < skip_first_)
    s = input_too_short(args_, first_id_, skipped_, "'" + store_ + "'", "records");
  // An empty input is almost always a mistake upstream (a glob that matched nothing, a
  // generator that failed): never let it pass silently. Records found already present
  // (a rerun) are no such mistake.
  std::string nothing;
  if (s.is_ok() && added_ == 0 && found_present() == 0)
    nothing = skipped_ > 0
                  ? "appended 0 records: all " + std::to_string(skipped_) + " input records were skipped (--skip-first)"
                  : "appended 0 records: the input was empty";
  if (!nothing.empty() && require_records_) s = invalid_argument(nothing + " (--require-records)");
  if (s.is_ok() && listener_.prepare) s = listener_.prepare();
  // A failed run may have a batch in flight (the window flushed, and waited, otherwise):
  // nothing reads or aborts the writer before it is written.
  if (!s.is_ok()) (void)window_.wait();
  const uint64_t before = writer_->published_length();
  if (s.is_ok()) s = writer_->close();  // on failure it aborts by itself
  meter_.finish();
  finished_ = true;

  if (s.is_ok()) {
    if (listener_.commit) listener_.commit();
    for (const auto& w : final_warnings_) spdlog::warn("{}", w);
    if (!nothing.empty()) spdlog::warn("{}", nothing);
    if (const CodecChoice* choice = writer_->codec_choice()) {
      report_.note(codec_choice_line(store_, *choice));
      report_.set_json("codec_choice", codec_choice_facts(*choice).object());
    }
    const double secs = report_.elapsed_s();
    const uint64_t stored = writer_->stored_bytes() - first_stored_;
    report_.set("records_appended", added_)
        .set("records_skipped", skipped_by_option())
        .set("records_present", found_present())
        .set("records_compared", compared_)
        .set("bytes_in", bytes_in_)
        .set("stored_bytes", stored)
        .set("length", writer_->published_length());
    const double rate_secs = std::max(secs, 1e-6);
    std::string line = "appended " + std::to_string(added_) + (added_ == 1 ? " record (" : " records (") +
                       format_bytes(static_cast<double>(bytes_in_)) + " in, " +
                       format_bytes(static_cast<double>(stored)) + " stored) to '" + printable(store_) + "'";
    line += skipped_words(skipped_by_option(), found_present());
    char tail[160];
    std::snprintf(tail, sizeof tail, " in %.2f s (%.0f records/s, %s/s); it now holds %llu", secs,
                  static_cast<double>(added_) / rate_secs,
                  format_bytes(static_cast<double>(bytes_in_) / rate_secs).c_str(),
                  static_cast<unsigned long long>(writer_->published_length()));
    line += tail;
    return report_.finish(line);
  }

  writer_->abort();
  commit_if_published(before);
  if (listener_.rollback) listener_.rollback();
  return run_failed(s, args_, "'" + store_ + "'", "records", first_id_, writer_->published_length());
}

}  // namespace zrec::cli
