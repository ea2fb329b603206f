// The rules between the codec options of a store to be made (create, the append
// commands' new stores, recompress and concat's DST), written once: which of --dict,
// --tier, --level and --checksum each codec takes. A broken rule is a UsageError
// (exit 2) naming the options.
//
// Example:
//   check_codec_options({.codec = Codec::kRaw, .level = 5});
//   // -> UsageError "--level is for zstd and zstd_dict, not raw"
#pragma once

#include <cstdint>
#include <string_view>

#include "zrec/format.h"
#include "zrec/schema.h"

namespace zrec::cli {

struct CodecOptions {
  Codec codec = Codec::kZstd;
  bool automatic = false;  // --codec auto: the first append (recompress: SRC's sample) chooses
  bool dict = false;       // --dict FILE given
  bool tier = false;       // --tier given (recompress, concat: train DST's dictionary)
  int level = 0;           // --level; 0: not given
  bool checksum = false;   // --checksum
  // zstd_dict needs --dict (create and new stores, which cannot train one).
  bool dict_required = false;
};

void check_codec_options(const CodecOptions& o);

// The --codec of a store to be made: a codec, or `auto` (zrec/codec_choice.h), which
// takes none of --dict, --tier, --level and --checksum: what they set depends on the
// codec it will choose.
struct NewCodec {
  Codec codec = Codec::kZstd;
  bool automatic = false;
};
NewCodec parse_new_codec(std::string_view text);
inline constexpr const char* kAutoCodecName = "auto";

// A new store's codec when none is given (create, the append commands' new stores):
// raw for Dense records of kSmallRecordBytes or fewer, zstd for everything else. Each
// record is one zstd frame, and a frame costs at least 9 bytes besides its content
// (6 of header, 3 of block header), so zstd stored 1.23-2.12x the bytes of every kind of
// record of 24 bytes or fewer measured (<i8 labels, <i4 tokens, float32/float64 values,
// uint8 pixels), 1.03-1.28x at 32, and only all-zero records smaller; from 48 bytes on it
// depends on the data. Options that only zstd takes (--level, --checksum, --dict) keep
// zstd, so they are never refused for a codec nobody asked for.
inline constexpr uint64_t kSmallRecordBytes = 32;
Codec default_codec(const Schema& schema, bool zstd_options);

}  // namespace zrec::cli
