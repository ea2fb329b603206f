// The rules between codec options (codec_rules.h).
#include "cli/options/codec_rules.h"

#include <string>

#include "cli/options/option_choices.h"
#include "cli/options/usage_error.h"

namespace zrec::cli {

void check_codec_options(const CodecOptions& o) {
  const std::string name = o.automatic ? kAutoCodecName : to_string(o.codec);
  const bool dict_codec = o.codec == Codec::kZstdDict && !o.automatic;
  if (o.dict && !dict_codec) throw UsageError("--dict is only used with --codec zstd_dict, not " + name);
  if (o.tier && !dict_codec) throw UsageError("--tier is only used with --codec zstd_dict, not " + name);
  if (o.dict && o.tier) throw UsageError("give --dict FILE or --tier, not both");
  if (o.level != 0 && (o.codec == Codec::kRaw || o.automatic))
    throw UsageError("--level is for zstd and zstd_dict, not " + name);
  if (o.checksum && o.automatic)
    throw UsageError(
        "--checksum sets zstd frame checksums, and codec auto may choose raw (give --codec zstd or "
        "zstd_dict)");
  if (o.checksum && o.codec == Codec::kRaw)
    throw UsageError(
        "--checksum sets zstd frame checksums; a raw store has none (use --codec zstd, or keep "
        "per-record digests with 'zrec digest --per-record')");
  if (o.dict_required && o.codec == Codec::kZstdDict && !o.dict)
    throw UsageError("--codec zstd_dict needs --dict FILE (train one with zrec train-dict or zstd --train)");
}

NewCodec parse_new_codec(std::string_view text) {
  if (text == kAutoCodecName) return {Codec::kZstd, true};
  auto codec = parse_codec(text);
  if (!codec)
    throw UsageError("unknown codec '" + std::string(text) + "' (use " + choice_list(new_codec_names()) + ")");
  return {*codec, false};
}

Codec default_codec(const Schema& schema, bool zstd_options) {
  if (!zstd_options && schema.is_dense() && schema.dense_width() <= kSmallRecordBytes) return Codec::kRaw;
  return Codec::kZstd;
}

}  // namespace zrec::cli
