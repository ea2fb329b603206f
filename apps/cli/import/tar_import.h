// append-tar's run over a root of named streams (cmd_append_tar.cc describes the
// command): its streams, and the steps of one run. The tar reading and --parse are in
// cmd_append_tar.cc, the opening, recovery, checkpoints and end in tar_import.cc.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/status.h"
#include "zrec/store_writer.h"

#include "cli/app/command.h"
#include "cli/formats/printable.h"
#include "cli/formats/text_numbers.h"
#include "cli/formats/webdataset_sample.h"
#include "cli/import/expansion_check.h"
#include "cli/import/keys_file.h"
#include "cli/import/npy_member.h"
#include "cli/import/present_check.h"
#include "cli/import/record_window.h"
#include "cli/import/tar_options.h"
#include "cli/import/tar_reader.h"
#include "cli/report/command_report.h"
#include "cli/report/progress.h"

namespace zrec::cli {

// "a, b, c", each name made printable.
std::string join_stream_names(const std::vector<std::string>& names);

// One named stream: ROOT/<ext>, its writer and window, and the current sample's member.
struct TarStream {
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

// One run of append-tar: the root opened and recovered (prepare), the tars read into
// its streams sample by sample (run), then the last commit or the take-back (finish).
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
  Status open_root();
  Status open_streams();
  void check_stream_dicts() const;
  void take_back();
  WriterOptions writer_options() const;
  Status open_stream(const std::string& ext, bool exists, const NpyHeader* first_array = nullptr);
  Status check_schema(const TarStream& s) const;
  void infer_parse(TarStream& s);
  Status check_present_key();
  Status check_present_key_stream();
  Status read_member(TarStream& s, const TarMember& m, const std::optional<NpyMember>& array);
  Status read_data(TarStream& s, TarReader& reader, const TarMember& m, const std::optional<NpyMember>& array);
  Status parse_text(TarStream& s, bool member_end);
  Status close_sample();
  Status checkpoint();
  // Waits for each window's batch in flight (if any): the write threads are done with
  // the writers after this, and the dataset may abort them.
  void wait_windows() {
    for (auto& s : streams_)
      if (s.window) (void)s.window->wait();
  }
  void drop_sample();
  TarStream* find(const std::string& ext) {
    auto it = index_.find(ext);
    return it == index_.end() ? nullptr : &streams_[it->second];
  }
  // Samples the root holds: its committed count.
  uint64_t holds() const { return dataset_ ? dataset_->committed_length() : first_length_; }
  // The streams, as made or found, then those still to make in --ext's order.
  std::string stream_list() const {
    std::vector<std::string> names;
    for (const auto& s : streams_) names.push_back(s.ext);
    for (const auto& ext : opt_.ext_streams)
      if (unmade_.count(ext) > 0) names.push_back(ext);
    return join_stream_names(names);
  }
  // The streams made of members: all but __key__, which comes from the sample's key.
  std::string member_stream_list() const {
    std::vector<std::string> names;
    for (const auto& s : streams_)
      if (!s.keys) names.push_back(s.ext);
    for (const auto& ext : opt_.ext_streams)
      if (unmade_.count(ext) > 0) names.push_back(ext);
    return join_stream_names(names);
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
  TarStreamOptions opt_;
  // The root's lock, its streams' writers and its commit protocol (zrec/dataset.h);
  // declared before streams_, whose windows use the writers and go first.
  std::unique_ptr<DatasetWriter> dataset_;
  std::vector<TarStream> streams_;  // index_ order: as created or found
  std::map<std::string, size_t> index_;
  // Streams --ext selects for a root that holds no sample yet, made by their first
  // member: a .npy member makes an array stream of its dtype and shape, which a stream
  // made before it (of bytes) would refuse.
  std::set<std::string> unmade_;
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
  // The current sample: every member of it with an extension, selected or not.
  SampleGrouper sample_;
  // Counts.
  uint64_t samples_seen_ = 0, added_ = 0, skipped_ = 0, incomplete_ = 0, ignored_ = 0, since_checkpoint_ = 0;
  uint64_t bytes_in_ = 0;
  const TarReader* reader_ = nullptr;  // run()'s, for report()
  uint64_t input_total_ = 0;           // the tars' sizes, when all are regular files
};

}  // namespace zrec::cli
