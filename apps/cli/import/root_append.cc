// RootAppend: see root_append.h. The protocol (lock, recover, publish every stream, then
// commit the root) is DatasetWriter's; this file adds the options and the messages.
#include "cli/import/root_append.h"

#include <algorithm>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "cli/formats/printable.h"
#include "cli/import/record_window.h"
#include "cli/os/interrupt.h"
#include "cli/report/byte_size.h"
#include "cli/report/codec_choice_report.h"
#include "cli/report/console.h"

namespace zrec::cli {

namespace {

std::string join_quoted(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "'" : ", '") + printable(n) + "'";
  return out;
}

}  // namespace

RootAppend::RootAppend(const std::string& command, const std::string& root, const AppendArgs& args,
                       const GlobalOptions& global)
    : root_(root),
      args_(args),
      global_(global),
      every_(args.checkpoint_every),
      outcome_(command, global, args.json),
      write_behind_(RecordWindow::write_behind_by_default()) {}

RootAppend::~RootAppend() {
  if (!finished_) take_back();
}

std::string RootAppend::label(size_t i) const {
  return "stream '" + printable(names_[i]) + "' ('" + join_path(root_, names_[i]) + "')";
}

Result<std::unique_ptr<RootAppend>> RootAppend::open(const std::string& command, const std::string& root,
                                                     const AppendArgs& args, const GlobalOptions& global,
                                                     const std::vector<std::string>& streams) {
  std::unique_ptr<RootAppend> r(new RootAppend(command, root, args, global));
  Status s = r->prepare(streams);
  if (!s.is_ok()) {
    r->finished_ = true;
    r->take_back();
    return s;
  }
  return r;
}

Status RootAppend::prepare(const std::vector<std::string>& streams) {
  // Only a marked root: a new one could not know its streams' schemas, and a directory of
  // stores is made a root on purpose (zrec adopt), never by an append.
  ZREC_ASSIGN_OR_RETURN(const Dataset found, Dataset::open(root_));
  if (!found.marked())
    return invalid_argument("'" + root_ +
                            "' is no root (it has no zrec-root marker): make its streams with zrec create ROOT/NAME, "
                            "then mark them with zrec adopt ROOT");
  WriterOptions w;
  w.level = args_.level;
  w.checksum = args_.checksum;
  ZREC_ASSIGN_OR_RETURN(dataset_, DatasetWriter::open(root_, {.writer = w}, global_.context(Work::kWrite)));
  // Under the lock: the streams as they are now, which every sample must feed.
  const std::vector<std::string> have = dataset_->stream_names();
  for (const auto& name : streams)
    if (std::find(have.begin(), have.end(), name) == have.end())
      return invalid_argument("root '" + root_ + "' has no stream '" + printable(name) + "' (its streams: " +
                              join_quoted(have) + "); make it with zrec create ROOT/NAME and zrec adopt ROOT");
  for (const auto& name : have)
    if (std::find(streams.begin(), streams.end(), name) == streams.end())
      return invalid_argument("root '" + root_ + "' has a stream '" + printable(name) +
                              "' that the input does not feed; every stream of a root gets one record per sample "
                              "(give it too)");
  names_ = streams;
  for (const auto& name : names_) writers_.push_back(dataset_->find(name));
  first_length_ = dataset_->committed_length();
  ZREC_RETURN_IF_ERROR(apply_resume_file(args_, first_length_, root_));
  ZREC_RETURN_IF_ERROR(check_start_length(args_, first_length_, "root '" + root_ + "'", "samples"));
  to_skip_ = records_to_skip(args_, first_length_);
  // Records past the committed count are those of a run killed before its commit.
  ZREC_ASSIGN_OR_RETURN(const std::vector<StreamCut> cuts, dataset_->recover());
  for (const auto& cut : cuts)
    spdlog::warn(
        "cut stream '{}' back from {} to {} records, the root's committed count (an append to the root was "
        "killed before its commit and left them)",
        join_path(root_, cut.name), cut.from, first_length_);
  for (StoreWriter* w : writers_) first_stored_.push_back(w->stored_bytes());
  return Status::ok();
}

Status RootAppend::append(std::vector<std::vector<RecordRef>> records) {
  return append_batch(std::move(records), false);
}

Status RootAppend::append_behind(std::vector<std::vector<RecordRef>> records) {
  return append_batch(std::move(records), true);
}

// Reading overlaps writing only this way: a root's appends read every stream's input on
// the caller's thread (where SIGINT interrupts a blocked read) and would otherwise wait
// for the writers between batches, where a store's append reads the next window while
// its writer compresses the last (record_window.h).
Status RootAppend::append_batch(std::vector<std::vector<RecordRef>>&& records, bool behind) {
  if (interrupted()) return cancelled("interrupted");
  ZREC_RETURN_IF_ERROR(wait_appended());
  const uint64_t n = records.empty() ? 0 : records[0].size();
  in_flight_ = std::move(records);
  if (behind && write_behind_) writing_.start([this] { return append_now(); });
  else ZREC_RETURN_IF_ERROR(append_now());
  added_ += n;
  since_checkpoint_ += n;
  if (every_ == 0 || since_checkpoint_ < every_) return Status::ok();
  ZREC_RETURN_IF_ERROR(wait_appended());
  return checkpoint();
}

Status RootAppend::append_now() {
  for (size_t i = 0; i < writers_.size(); ++i) ZREC_RETURN_IF_ERROR(writers_[i]->append(in_flight_[i]));
  return Status::ok();
}

Status RootAppend::wait_appended() { return writing_.wait(); }

uint64_t RootAppend::batch_bytes(uint64_t window_bytes) const {
  const uint64_t share = write_behind_ ? std::max<uint64_t>(1, window_bytes / 2) : window_bytes;
  const bool small = std::all_of(writers_.begin(), writers_.end(),
                                 [](const StoreWriter* w) { return RecordWindow::small_windows(*w); });
  return small ? std::min(share, RecordWindow::kSmallWindowBytes) : share;
}

// Every stream, then the root's commit (DatasetWriter::publish): a kill in between
// leaves records past the committed count, which the next run cuts back.
Status RootAppend::checkpoint() {
  if (interrupted()) return cancelled("interrupted");
  ZREC_RETURN_IF_ERROR(dataset_->publish());
  since_checkpoint_ = 0;
  spdlog::debug("checkpoint: root '{}' committed {} samples", root_, first_length_ + added_);
  return Status::ok();
}

void RootAppend::take_back() {
  // The writers are this thread's again; the run is failing already, so the batch's own
  // error adds nothing.
  (void)writing_.wait();
  if (!dataset_) return;
  std::vector<std::string> warnings;
  dataset_->abort(&warnings);
  for (const auto& w : warnings) spdlog::warn("{}", w);
}

Status RootAppend::finish(Status s) {
  finished_ = true;
  // The batch in flight came before whatever stopped the input: its error wins, as it
  // would have, had the batch been written before the next was read.
  if (Status written = wait_appended(); !written.is_ok()) s = std::move(written);
  if (s.is_ok() && interrupted()) s = cancelled("interrupted");
  // --from-length said the root holds samples of this input that it does not have.
  if (s.is_ok() && args_.from_length && skipped_ < to_skip_)
    s = input_too_short(args_, first_length_, skipped_, "root '" + root_ + "'", "samples");
  if (s.is_ok()) s = checkpoint();
  if (s.is_ok()) s = dataset_->close();
  if (s.is_ok()) {
    uint64_t stored = 0;
    for (size_t i = 0; i < writers_.size(); ++i) stored += writers_[i]->stored_bytes() - first_stored_[i];
    const uint64_t now = first_length_ + added_;
    const uint64_t by_option = std::min(skipped_, args_.skip_first), present = skipped_ - by_option;
    outcome_.set("path", root_).set("samples_appended", added_).set("samples_skipped", by_option);
    outcome_.set("samples_present", present).set("bytes_in", bytes_in_).set("stored_bytes", stored);
    outcome_.set("length", now).set("streams", names_);
    std::vector<const CodecChoice*> choices;
    for (const StoreWriter* w : writers_) choices.push_back(w->codec_choice());
    report_stream_choices(outcome_, root_, names_, choices);
    const double secs = outcome_.elapsed_s(), rate_secs = std::max(secs, 1e-6);
    std::string names;
    for (const auto& n : names_) names += (names.empty() ? "" : ", ") + printable(n);
    std::string line = "appended " + std::to_string(added_) + (added_ == 1 ? " sample (" : " samples (") +
                       format_bytes(static_cast<double>(bytes_in_)) + " in, " +
                       format_bytes(static_cast<double>(stored)) + " stored) to " + std::to_string(names_.size()) +
                       " stream" + (names_.size() == 1 ? "" : "s") + " of '" + root_ + "' (" + names + ")";
    line += skipped_words(by_option, present);
    char tail[160];
    std::snprintf(tail, sizeof tail, " in %.2f s (%.0f samples/s); it now holds %llu", secs,
                  static_cast<double>(added_) / rate_secs, static_cast<unsigned long long>(now));
    return outcome_.finish(line + tail);
  }
  const uint64_t held = dataset_ ? dataset_->committed_length() : first_length_;
  take_back();
  return run_failed(s, args_, "root '" + root_ + "'", "samples", first_length_, held);
}

}  // namespace zrec::cli
