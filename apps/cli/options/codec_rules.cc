// The rules between codec options (codec_rules.h).
#include "cli/options/codec_rules.h"

#include <string>

#include "cli/options/usage_error.h"

namespace zrec::cli {

void check_codec_options(const CodecOptions& o) {
  if (o.dict && o.codec != Codec::kZstdDict)
    throw UsageError(std::string("--dict is only used with --codec zstd_dict, not ") + to_string(o.codec));
  if (o.tier && o.codec != Codec::kZstdDict)
    throw UsageError(std::string("--tier is only used with --codec zstd_dict, not ") + to_string(o.codec));
  if (o.dict && o.tier) throw UsageError("give --dict FILE or --tier, not both");
  if (o.level != 0 && o.codec == Codec::kRaw) throw UsageError("--level is for zstd and zstd_dict, not raw");
  if (o.checksum && o.codec == Codec::kRaw)
    throw UsageError(
        "--checksum sets zstd frame checksums; a raw store has none (use --codec zstd, or keep "
        "per-record digests with 'zrec digest --per-record')");
  if (o.dict_required && o.codec == Codec::kZstdDict && !o.dict)
    throw UsageError("--codec zstd_dict needs --dict FILE (train one with zrec train-dict or zstd --train)");
}

Codec default_codec(const Schema& schema, bool zstd_options) {
  if (!zstd_options && schema.is_dense() && schema.dense_width() <= kSmallRecordBytes) return Codec::kRaw;
  return Codec::kZstd;
}

}  // namespace zrec::cli
