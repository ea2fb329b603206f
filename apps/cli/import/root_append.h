// The writing side of an append that feeds every stream of a root at once (append-npy
// ROOT --stream NAME=FILE, append-stream ROOT of JSON lines): the root's DatasetWriter
// (its lock, recovery and two-phase commit, zrec/dataset.h) driven with append-tar's
// exactly-once options (--from-length, --expect-length, --resume-file,
// --checkpoint-every), so a killed run rerun with the same command appends each sample
// once.
//
// The root must exist and be marked (zrec-root): its streams, made by `zrec create
// ROOT/NAME` and marked by `zrec adopt ROOT` (or by append-tar), fix each record's
// schema, which an input cannot guess (a scalar label or a Ragged token list). Every
// stream of the root is fed: a sample missing a stream would break record i = sample i.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zrec/dataset.h"
#include "zrec/store_writer.h"

#include "cli/app/command.h"
#include "cli/import/append_session.h"
#include "cli/report/command_report.h"
#include "zrec_support/background_task.h"

namespace zrec::cli {

class RootAppend {
 public:
  // Locks `root`, checks that `streams` (the names the command line gave, in its order)
  // are exactly the root's streams, applies --resume-file, --expect-length and
  // --from-length to its committed count, and cuts back what a killed run left past it.
  // Nothing is changed when it fails, except that cut (which only restores the commit).
  static Result<std::unique_ptr<RootAppend>> open(const std::string& command, const std::string& root,
                                                  const AppendArgs& args, const GlobalOptions& global,
                                                  const std::vector<std::string>& streams);
  // Aborts what was not published unless finish() ran.
  ~RootAppend();

  // The writer and schema of the i-th stream of `streams`.
  StoreWriter& writer(size_t i) { return *writers_[i]; }
  const Schema& schema(size_t i) const { return writers_[i]->schema(); }
  size_t stream_count() const { return writers_.size(); }
  const std::string& name(size_t i) const { return names_[i]; }
  const std::string& root() const { return root_; }
  // "stream 'NAME' ('ROOT/NAME')", for messages.
  std::string label(size_t i) const;

  // Input samples still to skip (--skip-first, then those the root holds past
  // --from-length), and the call that passes over n of them.
  uint64_t to_skip() const { return to_skip_ - skipped_; }
  void skip(uint64_t n) { skipped_ += n; }
  // Samples that may be appended before the next checkpoint.
  uint64_t room() const { return every_ == 0 ? UINT64_MAX : every_ - since_checkpoint_; }
  // Appends n samples: records[i] holds the n records of stream i (n <= room()), and
  // publishes a checkpoint when one comes due. append() returns once they are in the
  // writers. append_behind() hands them to a write thread and returns (where the process
  // may run on two CPUs or more, RecordWindow::write_behind_by_default()), so that the
  // caller reads the next batch while this one is compressed and written: the bytes and
  // dims the refs point to must stay unchanged until the next append_behind(), append()
  // or wait_appended() returned. Both first wait for the batch in flight and return its
  // error; a checkpoint that comes due waits for its batch before it publishes.
  Status append(std::vector<std::vector<RecordRef>> records);
  Status append_behind(std::vector<std::vector<RecordRef>> records);
  // Waits for the batch in flight, if any, and returns its status.
  Status wait_appended();
  // The bytes a caller's batch should hold at most, as RecordWindow sizes a store's
  // windows: half of `window_bytes` (the --window-mib) when one batch is written while
  // the next is read, so that the two stay within it, all of it otherwise; and at most
  // RecordWindow::kSmallWindowBytes where every writer takes small windows (raw, or one
  // lane), so that a batch the caller reuses stays in the CPU's caches.
  uint64_t batch_bytes(uint64_t window_bytes) const;
  // Input bytes read, for the summary.
  void count_input(uint64_t bytes) { bytes_in_ += bytes; }

  // Ends the run: with `input` ok, publishes every stream and commits the root, and
  // prints the summary; otherwise aborts the unpublished samples and returns `input`
  // with what the root holds and how to resume.
  Status finish(Status input);

 private:
  RootAppend(const std::string& command, const std::string& root, const AppendArgs& args, const GlobalOptions& global);
  Status prepare(const std::vector<std::string>& streams);
  Status append_batch(std::vector<std::vector<RecordRef>>&& records, bool behind);
  // The writers' appends of in_flight_: on the write thread, or the caller's.
  Status append_now();
  Status checkpoint();
  void take_back();

  const std::string root_;
  AppendArgs args_;  // a copy: --resume-file sets its --from-length
  const GlobalOptions& global_;
  const uint64_t every_;
  CommandReport outcome_;
  std::unique_ptr<DatasetWriter> dataset_;
  std::vector<std::string> names_;
  std::vector<StoreWriter*> writers_;
  std::vector<uint64_t> first_stored_;
  uint64_t first_length_ = 0, to_skip_ = 0, skipped_ = 0, added_ = 0, since_checkpoint_ = 0, bytes_in_ = 0;
  bool finished_ = false;
  const bool write_behind_;
  // The batch in flight: untouched by the caller's thread until writing_ was waited for.
  std::vector<std::vector<RecordRef>> in_flight_;
  // Last: destroyed first, so no job outlives what it reads.
  BackgroundTask writing_;
};

}  // namespace zrec::cli
