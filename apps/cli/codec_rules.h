// The rules between the codec options of a store to be made (create, the append
// commands' new stores, recompress and concat's DST), written once: which of --dict,
// --tier, --level and --checksum each codec takes. A broken rule is a UsageError
// (exit 2) naming the options.
//
// Example:
//   check_codec_options({.codec = Codec::kRaw, .level = 5});
//   // -> UsageError "--level is for zstd and zstd_dict, not raw"
#pragma once

#include "zrec/codec.h"

namespace zrec::cli {

struct CodecOptions {
  Codec codec = Codec::kZstd;
  bool dict = false;      // --dict FILE given
  bool tier = false;      // --tier given (recompress, concat: train DST's dictionary)
  int level = 0;          // --level; 0: not given
  bool checksum = false;  // --checksum
  // zstd_dict needs --dict (create and new stores, which cannot train one).
  bool dict_required = false;
};

void check_codec_options(const CodecOptions& o);

}  // namespace zrec::cli
