// The warning an append gives when its store's codec makes records bigger: after the
// first windows a writer appends in a run, judged once they hold 16 records, when zstd
// (or zstd_dict) stored more bytes than a raw store would, once per store and run, with
// the ratio and the codec that would store them smaller. Tiny records are the usual cause: each is one zstd frame,
// at least 9 bytes besides its content (codec_rules.h, default_codec).
//
// Example:
//   "'labels/': zstd stored 2.12x the bytes it read in the first 16384 records;
//    --codec raw would store them smaller"
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "zrec/context.h"
#include "zrec/store_writer.h"

namespace zrec::cli {

// The warning's text, or empty when the window did not grow: `stored` bytes in
// `codec` for `records` records of `payload` bytes read, which a raw store holds in
// `raw_bytes` (the payload and, Ragged, each record's shape prefix). `created`: this
// run made the store, so --codec raw is the way out; otherwise it is another store.
std::string expansion_warning(const std::string& store, Codec codec, uint64_t records, uint64_t payload,
                              uint64_t raw_bytes, uint64_t stored, bool created, const std::string& remedy = {});

class ExpansionCheck {
 public:
  // The first window must hold at least this many records to be judged.
  static constexpr size_t kMinRecordsToJudge = 16;

  // `warn` receives the warning; empty: the check is off.
  // `remedy`, when given, is what the warning of a store this run created proposes
  // (append-tar: "--stream-codec png=raw ..."), instead of --codec raw.
  ExpansionCheck(std::string store, bool created, WarningSink warn, std::string remedy = {})
      : store_(std::move(store)), created_(created), warn_(std::move(warn)), remedy_(std::move(remedy)) {}

  void set_created() { created_ = true; }

  // Appends `records` with `writer` (StoreWriter::append), checking the first windows;
  // a warning is kept for report(). May run on a write thread (RecordWindow's), one
  // call at a time.
  Status append(StoreWriter& writer, std::span<const RecordRef> records);
  // Gives the kept warning, if any, to the sink, on the calling thread: the sink draws
  // on stderr beside the progress meter and the command's own warnings, which a write
  // thread must not race. Call it after append() returned (or was waited for).
  void report();

 private:
  std::string store_;
  bool created_ = false;
  WarningSink warn_;
  std::string remedy_;
  bool checked_ = false;
  uint64_t records_ = 0, payload_ = 0, prefixes_ = 0, stored_ = 0;  // of the windows before the check
  std::string warning_;                                             // the first windows' warning, not reported yet
};

}  // namespace zrec::cli
