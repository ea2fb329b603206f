// The small facts of the zrecord format that its users meet (docs/format.md): the names
// of a store's files (§1), its limits (§2, §3, §10), its per-record codecs (§6) and where
// one record's stored bytes are (§3). Values and names, no I/O.
//
//   if (bytes.size() > zrec::kMaxRecordBytes) return "record too large";
//   std::optional<zrec::Codec> codec = zrec::parse_codec("zstd");
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zrec {

// The files of a store directory (§1).
inline constexpr const char* kMetaFile = "meta.zr";
inline constexpr const char* kDictFile = "dict.zr";
// Beside an empty store created with CreateOptions::codec_auto: its codec is still to be chosen by
// the first append (§6, "The pending choice"). Readers ignore it (§1).
inline constexpr const char* kCodecAutoFile = "zrec-codec-auto";
inline constexpr const char* kCodecAutoText = "zrec-codec-auto 1\n";
inline std::string data_file_name(uint32_t shard) { return "data_" + std::to_string(shard) + ".zr"; }

// One record's logical and stored length: 1 <= length <= 2^31 - 1 bytes (§3, §10).
inline constexpr uint64_t kMaxRecordBytes = (uint64_t{1} << 31) - 1;

// A Ragged ndim-1 record is an 8-byte shape prefix and its payload, so a byte string
// stored as one such record (a line, a file, a tar member) is at most this long.
inline constexpr uint64_t kMaxRagged1dPayloadBytes = kMaxRecordBytes - 8;

// Data shards per store: 1..255 (§2), 4 unless the creator says otherwise (§1).
inline constexpr uint32_t kMaxShards = 255;
inline constexpr uint32_t kDefaultShards = 4;

// The schema's MsgPack bytes live in the 4096-byte static page after the tails (§2).
inline constexpr uint32_t kMaxSchemaBytes = 2040;

// Compression levels the format names (§6): a writer may choose others, readers never care.
inline constexpr int kZstdLevel = 3;
inline constexpr int kZstdDictLevel = 15;

// The per-record codecs of a store (§6), one per store, fixed at create.
enum class Codec : uint8_t {
  kRaw = 0,       // the logical record, verbatim
  kZstd = 1,      // one zstd frame per record, level 3
  kZstdDict = 2,  // one zstd frame per record against dict.zr, level 15
};

// The spelling of docs/format.md and loaderx: "raw", "zstd", "zstd_dict".
const char* to_string(Codec codec);

// Accepts "raw", "zstd", "zstd_dict" and the upstream alias "zstdict".
std::optional<Codec> parse_codec(std::string_view name);

// Where one record's stored bytes are (§3).
struct RecordLoc {
  uint64_t offset = 0;        // inside data_{id % data_shards}.zr
  uint32_t phys_length = 0;   // stored size (after the codec)
  uint32_t logic_length = 0;  // original size (before the codec)

  friend bool operator==(const RecordLoc&, const RecordLoc&) = default;
};

}  // namespace zrec
