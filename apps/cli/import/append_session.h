// What the append-* commands (append-npy, append-files, append-stream) share, written
// once: the store writer and its bounded window, checkpoints (--checkpoint-every),
// resuming (--from-length, --skip-first), --expect-length, SIGINT/SIGTERM, the progress meter, and the summary line.
//
// A command opens a session, feeds it records in input order (each input record
// first asks skip_record() whether it is one of the first K to skip), and ends with
// finish(status of its input side). finish() publishes and prints the summary; on an
// error or an interruption it aborts whatever was appended since the last checkpoint
// and says how many records the store holds, and how to resume.
//
// Exactly once: with --from-length N the input begins at record N of the store. The
// store's length L is read under the writer's lock; the first L - N input records are
// already there and are skipped (L < N fails: records are missing, or it is another
// store), so the same command run again after any interruption appends each record
// once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "cli/app/command.h"
#include "cli/import/present_check.h"
#include "cli/import/record_window.h"
#include "cli/options/cli11_fwd.h"
#include "cli/os/interrupt.h"
#include "cli/report/command_report.h"
#include "cli/report/progress.h"

namespace zrec::cli {

// The options every append command takes.
struct AppendArgs {
  uint64_t window_mib = kDefaultWindowBytes >> 20;  // --window-mib: 1..1048576, default 64
  uint64_t checkpoint_every = 0;                    // --checkpoint-every N: 0 = publish at the end only
  uint64_t skip_first = 0;                          // --skip-first K
  std::optional<uint64_t> from_length;              // --from-length N: the input begins at record N
  std::string resume_file;                          // --resume-file F: --from-length kept in F (resume_file.h)
  std::optional<uint64_t> expect_length;            // --expect-length N: the store must hold exactly N
  std::optional<bool> checksum;                     // --checksum / --no-checksum; unset: the store's setting
  std::optional<bool> check_present;                // --check-present / --no-check-present; unset: where read anyway
  bool require_records = false;                     // --require-records: appending nothing is an error
  bool json = false;                                // --json: the outcome as one JSON object on stdout
  int level = 0;                                    // --level N: 1..22; 0: the format's (3, or 15 with a dictionary)
};

// Binds --window-mib, --checkpoint-every, --skip-first, --from-length, --expect-length,
// --checksum/--no-checksum, --require-records, --level and --json on `cmd` to `args`.
// `unit` names what the length counts ("records"; "samples" for append-tar).
void add_append_options(CLI::App* cmd, AppendArgs& args, const std::string& unit = "records");

// --check-present and --no-check-present (AppendSession::compares_skipped), for the
// commands that compare the records a rerun finds present.
void add_check_present_options(CLI::App* cmd, AppendArgs& args);

// --expect-length and --from-length against `length`, what `where` ("'tokens/'", "root
// 'ds/'") held when its writer lock was taken: ok, or the error that ends the command
// before it changes anything.
Status check_start_length(const AppendArgs& args, uint64_t length, const std::string& where, const std::string& unit);

// --resume-file: sets args.from_length from the file, or writes the file with `length`
// (read under the writer's lock) on a first run; nothing without --resume-file. A
// resume file inside `store` (the store or root appended to) is refused.
Status apply_resume_file(AppendArgs& args, uint64_t length, const std::string& store);

// Input records to skip: --skip-first, then those already in the store past --from-length.
uint64_t records_to_skip(const AppendArgs& args, uint64_t length);

// What to add to the message of an interrupted or failed run, when `holds` of its input
// (the records past where the input began, plus --skip-first) are in the store: how to
// resume, as a command that needs no arithmetic; empty when there is nothing to resume.
std::string resume_hint(const AppendArgs& args, uint64_t first_length, uint64_t holds);

// The error of a run that failed (`s`) or was interrupted, leaving `where` ("'a.zrec'",
// "root 'r'") holding `holds` of `unit` ("records", "samples"): on an interrupt
// "interrupted; WHERE holds N UNIT", else, where some of the input stayed, s's message
// then "; WHERE holds N UNIT, as of the last checkpoint"; each with resume_hint's advice.
// One wording for every append, store or root, so a script reads them alike.
Status run_failed(const Status& s, const AppendArgs& args, const std::string& where, const char* unit,
                  uint64_t first_length, uint64_t holds);

// The summary's words for the input records skipped: " after skipping 30 already
// present", " after skipping 5 (--skip-first) and 30 already present", or empty.
std::string skipped_words(uint64_t by_skip_first, uint64_t present);

// The error when the input ended before every record --from-length said was present:
// the input is not the one the store holds, or the store is another.
Status input_too_short(const AppendArgs& args, uint64_t first_length, uint64_t skipped, const std::string& where,
                       const std::string& unit);

class AppendSession {
 public:
  // Opens `store` for appending (StoreWriter::open with the global --threads/--wait),
  // then installs the SIGINT/SIGTERM handlers (after the lock is taken, so a signal
  // while --wait blocks still kills zrec the ordinary way) and starts the progress
  // meter, labelled with `command` ("append-files").
  // `options` may set the codec details (level, checksum); threads and wait come from
  // `global`, and args.level and args.checksum apply where `options` leaves them unset.
  // --level on a raw store is a usage error (the store unchanged).
  static Result<std::unique_ptr<AppendSession>> open(const std::string& command, const std::string& store,
                                                     const AppendArgs& args, const GlobalOptions& global,
                                                     WriterOptions options = {});
  // Aborts unless finish() ran.
  ~AppendSession();

  StoreWriter& writer() { return *writer_; }
  const Schema& schema() const { return writer_->schema(); }
  ProgressMeter& progress() { return meter_; }
  uint64_t window_bytes() const { return window_bytes_; }

  // --- resuming -------------------------------------------------------------------
  // Call once per input record, in input order, before appending it: true while it is
  // one of the first --skip-first records, which must then be dropped.
  bool skip_record() {
    if (skipped_ >= skip_first_) return false;
    ++skipped_;
    report();
    return true;
  }
  // Input records skipped so far: by --skip-first, and found already present (--from-length).
  uint64_t skipped_by_option() const { return std::min(skipped_, skip_option_); }
  uint64_t found_present() const { return skipped_ - skipped_by_option(); }
  // Records still to skip, and a way to skip n <= to_skip() at once.
  uint64_t to_skip() const { return skip_first_ - skipped_; }
  void skip_records(uint64_t n) {
    skipped_ += n;
    report();
  }
  // Whether the record skip_record() just passed over is one the store already holds
  // (--from-length) whose bytes this run compares with the stored ones: by default
  // where the command reads them anyway (`read_anyway`: a pipe, a line of text); always
  // with --check-present (a file is then read, not skipped by a seek); never with
  // --no-check-present.
  bool compares_skipped(bool read_anyway) const {
    return skipped_ > skip_option_ && args_.check_present.value_or(read_anyway);
  }
  // Of the records still to skip, how many a command may pass over unread (by a seek):
  // all of them, or, where it compares present records, those of --skip-first left.
  uint64_t to_skip_unread(bool read_anyway) const {
    if (!args_.check_present.value_or(read_anyway)) return to_skip();
    return skipped_ < skip_option_ ? skip_option_ - skipped_ : 0;
  }
  // Compares the record skip_record() just passed over, `payload` with `dims` (Ragged;
  // null for Dense), with the stored one: the error names `where` and the record.
  Status compare_skipped(std::span<const uint8_t> payload, const uint64_t* dims, const std::string& where);
  // Whether the record skip_record() just passed over is one the store already holds
  // whose size alone is compared (compare_skipped_size): where its bytes are not
  // compared, unless --no-check-present.
  bool compares_skipped_size(bool read_anyway) const {
    return skipped_ > skip_option_ && args_.check_present.value_or(true) && !compares_skipped(read_anyway);
  }
  // Compares the payload size `bytes` of that record with the stored one's, from the
  // store's table (no record is read): the error names `where`, the record and both sizes.
  Status compare_skipped_size(uint64_t bytes, const std::string& where);

  // Input items that are not records (a missing file under --skip-missing): they count
  // towards the progress total only.
  void count_non_record(uint64_t n = 1) {
    non_records_ += n;
    report();
  }

  // The ID the next record added gets.
  uint64_t next_id() const { return first_id_ + added_; }

  // Records that may still be appended before the next checkpoint (UINT64_MAX
  // without --checkpoint-every).
  uint64_t room_before_checkpoint() const {
    return checkpoint_every_ == 0 ? UINT64_MAX : checkpoint_every_ - since_checkpoint_;
  }

  // kCancelled once SIGINT/SIGTERM arrived (the message is replaced by finish()).
  Status check_interrupt() const;

  // --- records of known size, copied into the window --------------------------------
  // As RecordWindow::reserve, but never past the next checkpoint; fails with
  // kCancelled when interrupted.
  Result<uint64_t> reserve(uint64_t count, uint64_t bytes_each);
  uint8_t* next_payload() { return window_.next_payload(); }
  // As RecordWindow::add; publishes a checkpoint when one is due.
  Status add(uint64_t bytes, const uint64_t* dims);

  // --- a byte stream cut into records in the window (see RecordWindow) --------------
  Result<std::span<uint8_t>> input_space(uint64_t min_bytes);
  // Streamed bytes count as input (progress, summary) when cut or dropped, so the
  // meter follows the records, not the read-ahead.
  void input_written(uint64_t n) { window_.input_written(n); }
  std::span<const uint8_t> pending() const { return window_.pending(); }
  // Takes the first record_bytes of pending() as a record, then drops gap_bytes.
  // (Inline, as RecordWindow::cut: once per line of append-stream.)
  Status cut(uint64_t record_bytes, uint64_t gap_bytes, const uint64_t* dims) {
    ZREC_RETURN_IF_ERROR(window_.cut(record_bytes, gap_bytes, true, dims));
    bytes_in_ += record_bytes + gap_bytes;  // reported by after_records
    return after_records(1);
  }
  // Drops the first n bytes of pending() (a skipped record, a delimiter).
  Status drop(uint64_t n) {
    count_input(n);
    return window_.cut(0, n, false, nullptr);
  }

  // --- records in the caller's buffers (append-files, append-h5, append-lmdb) --------
  // Appends them at once, without copying. Requires records.size() <=
  // room_before_checkpoint(); publishes a checkpoint when one is due.
  Status append(std::span<const RecordRef> records);
  // As append(), but on the window's write thread where it writes behind
  // (RecordWindow::append_behind): returns once they are handed on, and their memory
  // must stay unchanged until wait_appended() returned; a checkpoint that comes due
  // waits for them first. The error of the batch before is returned first.
  Status append_behind(std::span<const RecordRef> records);
  // As append_behind(), for records packed for a raw store (StoreWriter::pack) as the
  // next ones (next_id()).
  Status append_behind(PackedRecords& records);
  // Waits for the records handed on by append_behind() and returns how their append
  // went.
  Status wait_appended() { return window_.wait(); }
  // The bytes a caller's batch for append_behind() should hold at most: half the
  // window when one batch is written while the next is read, so that the two stay
  // within --window-mib; the whole window otherwise.
  uint64_t batch_bytes() const {
    return window_.writes_behind() ? std::max<uint64_t>(1, window_bytes_ / 2) : window_bytes_;
  }

  // The records and bytes at which the window hands its own batches on: a caller that
  // cuts batches in its own memory for append_behind() (a mapped file's lines) matches
  // them, so its batches cost the writer what the window's would.
  uint64_t window_records() const { return window_.max_records(); }
  uint64_t window_buffer_bytes() const { return window_.buffer_budget(); }
  // Bytes read from the inputs, for the progress meter and the summary.
  void count_input(uint64_t bytes) {
    bytes_in_ += bytes;
    report();
  }

  // Keeps a side file in step with the store's publications (append-files'
  // --manifest): prepare() runs before each publication and may fail it, commit()
  // after it, rollback() when the session aborts what it had not published.
  struct Listener {
    std::function<Status()> prepare;
    std::function<void()> commit;
    std::function<void()> rollback;
  };
  void set_listener(Listener listener) { listener_ = std::move(listener); }
  // The listener of a side file with prepare(), commit() and rollback() (append-files'
  // manifest, append-lmdb's keys file). Opening it cut off `removed` lines that an
  // interrupted run wrote for records it never published; they are reported as
  // "removed the last N line(s) of WHAT: WHY".
  template <class SideFile>
  void follow(SideFile* file, uint64_t removed, const std::string& what, const std::string& why) {
    if (removed > 0)
      warn("removed the last " + std::to_string(removed) + " line" + (removed == 1 ? "" : "s") + " of " + what + ": " +
           why);
    set_listener({.prepare = [file] { return file->prepare(); },
                  .commit = [file] { file->commit(); },
                  .rollback = [file] { file->rollback(); }});
  }

  // The command created the store this run: the first window's codec warning
  // (expansion_check.h) then says --codec raw.
  void note_created() { expansion_.set_created(); }

  // A warning on stderr ("zrec <command>: warning: ..."), drawn above the progress line.
  void warn(const std::string& message);
  // The outcome finish() prints: a command adds its own facts (append-files: files
  // skipped) before finish(); the session sets the common ones (docs/json.md).
  CommandReport& outcome() { return report_; }
  // A warning printed by finish() just before the summary line (end-of-run counts).
  void add_final_warning(std::string message) { final_warnings_.push_back(std::move(message)); }

  // Ends the session. `input` is the status of the command's input side.
  // - ok and not interrupted: flushes the window, publishes (StoreWriter::close),
  //   prints the summary line (unless -q), or with --json the JSON object, and returns ok; when no record was appended,
  //   warns "appended 0 records: the input was empty" first, or with --require-records
  //   aborts and returns that as an error (the store unchanged); records found already
  //   present (--from-length) are no warning;
  // - the input ended before the records --from-length says are present: that error;
  // - interrupted: aborts the unpublished records and returns kCancelled "interrupted;
  //   'S' holds N records (resume: the same command with --from-length M)";
  // - any other error: aborts the unpublished records and returns `input`, with
  //   "; 'S' holds N records (...)" added when checkpoints published some.
  Status finish(Status input);

 private:
  AppendSession(const std::string& command, const std::string& store, const AppendArgs& args,
                const GlobalOptions& global, std::unique_ptr<StoreWriter> writer);
  Status checkpoint();
  // append() (behind: append_behind()) of a batch that does not cross a checkpoint.
  Status append_batch(std::span<const RecordRef> records, bool behind);
  // Before a batch of n records is handed on: an interrupt stops it, and it must not
  // cross a checkpoint.
  Status check_batch(uint64_t n);
  // Commits the listener when the store's published length moved past `before`. A
  // publication can fail after its page reached meta.zr (a failed fsync; the writer
  // then reports the new state as published), so the side file follows the store,
  // not the status.
  void commit_if_published(uint64_t before) {
    if (writer_->published_length() != before && listener_.commit) listener_.commit();
  }
  Status after_records(uint64_t n) {
    added_ += n;
    since_checkpoint_ += n;
    report();
    return checkpoint_every_ != 0 && since_checkpoint_ >= checkpoint_every_ ? checkpoint() : Status::ok();
  }
  void report() { meter_.update(skipped_ + non_records_ + added_, bytes_in_); }

  const std::string store_;
  const AppendArgs args_;
  const uint64_t window_bytes_, checkpoint_every_;
  uint64_t skip_option_ = 0;  // --skip-first
  uint64_t skip_first_ = 0;   // records to skip in all: --skip-first, then those already present
  const bool require_records_;
  CommandReport report_;  // its clock starts when the store is open
  std::unique_ptr<StoreWriter> writer_;
  ExpansionCheck expansion_;
  RecordWindow window_;
  InterruptScope interrupt_scope_;
  ProgressMeter meter_;
  Listener listener_;
  std::vector<std::string> final_warnings_;
  std::unique_ptr<PresentCheck> present_check_;  // opened by the first compare_skipped()

  uint64_t first_id_ = 0;          // the store's length when the session began
  uint64_t first_stored_ = 0;      // its stored bytes then
  uint64_t added_ = 0;             // records added (appended or in the window)
  uint64_t skipped_ = 0;           // records skipped (--skip-first, then already present)
  uint64_t compared_ = 0;          // records found present and compared with the stored ones
  uint64_t non_records_ = 0;       // input items that were not records
  uint64_t since_checkpoint_ = 0;  // records added since the last publication
  uint64_t bytes_in_ = 0;
  bool finished_ = false;
};

}  // namespace zrec::cli
