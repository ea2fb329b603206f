// The limits of a zrecord store that its users meet, and the names of its files
// (docs/format.md §1, §2, §3, §10): facts of the format that need no code.
//
//   if (bytes.size() > zrec::kMaxRecordBytes) return "record too large";
#pragma once

#include <cstdint>
#include <string>

namespace zrec {

// The files of a store directory (§1).
inline constexpr const char* kMetaFile = "meta.zr";
inline constexpr const char* kDictFile = "dict.zr";
// Beside an empty store created with `--codec auto`: its codec is still to be chosen by
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

}  // namespace zrec
