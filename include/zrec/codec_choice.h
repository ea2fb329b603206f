// CreateOptions::codec_auto: choosing a store's codec from its records (docs/format.md §6, "The
// pending choice"). A sample of the records is measured raw, as zstd frames, and, when
// records are small, as zstd_dict frames against a dictionary trained from them
// (zrec/dict.h); pick_codec() keeps the smallest only where it clearly pays.
// Same records = same choice and the same dictionary bytes, whatever the thread count:
// the sample is seeded and the trainer deterministic (zrec/dict.h).
//
// Example:
//   auto source = zrec::store_record_source({store.get()});
//   ZREC_ASSIGN_OR_RETURN(zrec::CodecChoice c, zrec::choose_codec(*source, {}));
//   // c.codec: raw, zstd or zstd_dict (c.dictionary then holds dict.zr's bytes)
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/dict.h"
#include "zrec/format.h"
#include "zrec/schema.h"
#include "zrec/status.h"
#include "zrec/store_writer.h"

namespace zrec {

// The bytes one sample of records takes in each codec, one frame per record.
struct ChoiceSizes {
  uint64_t records = 0;  // records measured
  uint64_t raw = 0;      // their logical bytes (Ragged: with the shape prefix)
  uint64_t zstd = 0;     // as zstd frames (level 3)
  uint64_t dict = 0;     // as zstd_dict frames (level 15); 0: no dictionary was trained
};

// The rule, on measured sizes: zstd_dict when its frames are at most kAutoDictShare of
// zstd's (and of raw); otherwise zstd when its frames are at most kAutoZstdShare of raw;
// otherwise raw, which costs nothing to decode. Nothing measured (records == 0): zstd.
inline constexpr double kAutoZstdShare = 0.9;
inline constexpr double kAutoDictShare = 0.9;
Codec pick_codec(const ChoiceSizes& sizes);

struct CodecChoice {
  Codec codec = Codec::kZstd;
  std::vector<uint8_t> dictionary;  // dict.zr's bytes when codec is zstd_dict
  ChoiceSizes sizes;
  uint64_t population = 0;  // records the sample was drawn from
  uint64_t sampled = 0;     // records sampled: trained on and held out, or measured
  bool trained = false;     // a dictionary was trained (sizes.dict is its figure)
  std::string note;         // why none was, when records are small but training failed
};

// Records of at most this mean logical size get a dictionary trained for them. What a
// dictionary adds over zstd at its level (15) without one, on tokens-var records joined
// into larger ones: 11% at 0.5 KiB, 5% at 2.2 KiB, 3% at 8.2 KiB, 1% at 34 KiB, -2% at
// 136 KiB (docs/bench.md, "codec auto"); past a few KiB a record finds its matches in
// itself, and the training (about a second) buys little.
inline constexpr uint64_t kAutoDictMeanBytes = 4 << 10;

// The window a pending store's codec is chosen from: the records of the first append
// call when it holds at least this many bytes or records; otherwise the writer holds
// (copies) the records of its first calls until they do, or until it publishes (the
// dictionary trainer's small tier samples as much: 4 MiB, 20000 records). Appends that
// hand records one sample at a time (a root's streams fed from .npy files) thus choose
// from as many records as those that hand a 64 MiB window.
inline constexpr uint64_t kAutoWindowBytes = uint64_t{4} << 20;
inline constexpr uint64_t kAutoWindowRecords = 20000;

// Measures a sample of `source` and picks its codec. Errors: reading the source fails.
// A dictionary that cannot be trained (too few or too uniform records) is no error:
// the choice is then between raw and zstd, and `note` says why. Training runs on
// ctx.lanes (null: write_lane_budget() lanes of its own).
Result<CodecChoice> choose_codec(RecordSource& source, const Context& ctx = {});

// The records of one window an append is given, as a RecordSource of their logical
// bytes (Ragged: the shape prefix, then the payload). The records must outlive it.
std::unique_ptr<RecordSource> window_record_source(const Schema& schema, std::span<const RecordRef> records);

// The measurements in words: "7630 of 200000 records sampled, 953 held out and measured
// (469912 bytes); compression ratio zstd 1.83x, zstd_dict 2.33x" (raw bytes over each
// codec's, on the held-out records when a dictionary was trained).
std::string describe_choice(const CodecChoice& choice);

}  // namespace zrec
