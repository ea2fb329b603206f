// The 4096-byte static page at the start of meta.zr (docs/format.md §2): length, schema
// length, shard count, codec, reserved bytes, 255 shard tails, and the MsgPack schema.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "zrec/format.h"
#include "zrec/status.h"

#include "format/layout.h"

namespace zrec::format {

struct StaticPage {
  uint64_t length = 0;                    // published records
  uint32_t data_shards = kDefaultShards;  // 1..255
  Codec codec = Codec::kZstd;
  std::array<uint64_t, kMaxShards> tails{};  // slots >= data_shards are 0
  std::string schema;                        // MsgPack bytes, 1..2040

  friend bool operator==(const StaticPage&, const StaticPage&) = default;
};

using PageBytes = std::array<uint8_t, kPageSize>;

// Encodes the page; schema padding is zero. Requires a page that passes validation
// (callers build pages from validated state; encoding never fails).
PageBytes encode_static_page(const StaticPage& page);

// Decodes and checks every page rule of docs/format.md §8: schema_length in 1..2040,
// data_shards in 1..255, codec in 0..2, reserved bytes zero, tail slots at and past
// data_shards zero, and 4096 + 16*length not overflowing. kMalformed names the field.
Result<StaticPage> decode_static_page(std::span<const uint8_t, kPageSize> bytes);

}  // namespace zrec::format
