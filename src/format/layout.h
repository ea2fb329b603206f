// Byte layout constants of a zrecord store, each citing docs/format.md.
#pragma once

#include <cstdint>
#include <string>

#include "zrec/format.h"

namespace zrec::format {

// §2: the static page is meta.zr bytes 0..4095.
inline constexpr uint64_t kPageSize = 4096;
inline constexpr uint64_t kLengthOffset = 0;        // u64
inline constexpr uint64_t kSchemaLengthOffset = 8;  // u16
inline constexpr uint64_t kDataShardsOffset = 10;   // u8
inline constexpr uint64_t kCodecOffset = 11;        // u8
inline constexpr uint64_t kReservedOffset = 12;     // 4 x u8, zero
inline constexpr uint64_t kReservedSize = 4;
inline constexpr uint64_t kTailsOffset = 16;  // 255 x u64 = 2040 bytes
inline constexpr uint32_t kMaxShards = zrec::kMaxShards;
inline constexpr uint64_t kSchemaOffset = kTailsOffset + 8 * kMaxShards;  // 2056
inline constexpr uint32_t kMaxSchemaLength = kPageSize - kSchemaOffset;   // 2040
static_assert(kSchemaOffset == 2056 && kMaxSchemaLength == zrec::kMaxSchemaBytes);

// §3: RecordLoc[i] is 16 bytes at 4096 + 16*i.
inline constexpr uint64_t kRecordLocSize = 16;
inline constexpr uint64_t kTableOffset = kPageSize;

// §3/§10: 1 <= logic_length, phys_length < 2^31.
inline constexpr uint64_t kMaxRecordBytes = zrec::kMaxRecordBytes;

inline constexpr uint32_t kDefaultShards = zrec::kDefaultShards;  // §1

// §1: file names inside the store directory.
// (zrec/format.h: kMetaFile, kDictFile, data_file_name)
using zrec::data_file_name;
using zrec::kDictFile;
using zrec::kMetaFile;

// [zrec convention] An empty store created with checksums on (create --checksum) holds
// these 16 bytes in the RecordLoc[0] slot, past `length`, where readers ignore them
// (§7: table entries past `length` are leftovers). Writers of an empty store read it to
// set the zstd content checksum; the first publication overwrites it with record 0.
inline constexpr char kChecksumMarker[17] = "zrec-checksum-on";

// §10: dict.zr is at least 8 bytes.
inline constexpr uint64_t kMinDictBytes = 8;

// §6: compression levels fixed by the format (writers may choose others; readers never care).
inline constexpr int kZstdLevel = zrec::kZstdLevel;
inline constexpr int kZstdDictLevel = zrec::kZstdDictLevel;

}  // namespace zrec::format
