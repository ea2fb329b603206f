// Encoding and validation of the static page (docs/format.md §2 and §8).
#include "format/static_page.h"

#include <cstring>
#include <string>

#include "format/endian.h"

namespace zrec::format {

PageBytes encode_static_page(const StaticPage& page) {
  PageBytes out{};
  store_le<uint64_t>(&out[kLengthOffset], page.length);
  store_le<uint16_t>(&out[kSchemaLengthOffset], static_cast<uint16_t>(page.schema.size()));
  out[kDataShardsOffset] = static_cast<uint8_t>(page.data_shards);
  out[kCodecOffset] = static_cast<uint8_t>(page.codec);
  // bytes 12..15 stay zero (reserved).
  for (uint32_t s = 0; s < kMaxShards; ++s) store_le<uint64_t>(&out[kTailsOffset + 8 * s], page.tails[s]);
  std::memcpy(&out[kSchemaOffset], page.schema.data(), page.schema.size());
  return out;
}

Result<StaticPage> decode_static_page(std::span<const uint8_t, kPageSize> bytes) {
  StaticPage page;
  page.length = load_le<uint64_t>(&bytes[kLengthOffset]);
  // 4096 + 16*length must fit in 64 bits (§10).
  if (page.length > (UINT64_MAX - kTableOffset) / kRecordLocSize)
    return malformed("length " + std::to_string(page.length) + " overflows the record table size");

  const uint16_t schema_length = load_le<uint16_t>(&bytes[kSchemaLengthOffset]);
  if (schema_length < 1 || schema_length > kMaxSchemaLength)
    return malformed("schema_length " + std::to_string(schema_length) + " is outside 1..2040");

  page.data_shards = bytes[kDataShardsOffset];
  if (page.data_shards < 1) return malformed("data_shards is 0 (must be 1..255)");

  const uint8_t codec = bytes[kCodecOffset];
  if (codec > 2) return malformed("codec id " + std::to_string(codec) + " is not 0 (raw), 1 (zstd) or 2 (zstd_dict)");
  page.codec = static_cast<Codec>(codec);

  for (uint64_t i = 0; i < kReservedSize; ++i) {
    if (bytes[kReservedOffset + i] != 0)
      return malformed("reserved byte " + std::to_string(kReservedOffset + i) + " is not zero");
  }
  for (uint32_t s = 0; s < kMaxShards; ++s) {
    page.tails[s] = load_le<uint64_t>(&bytes[kTailsOffset + 8 * s]);
    if (s >= page.data_shards && page.tails[s] != 0)
      return malformed("tail slot " + std::to_string(s) + " is " + std::to_string(page.tails[s]) +
                       " but the store has only " + std::to_string(page.data_shards) + " shards");
  }
  page.schema.assign(reinterpret_cast<const char*>(&bytes[kSchemaOffset]), schema_length);
  return page;
}

}  // namespace zrec::format
