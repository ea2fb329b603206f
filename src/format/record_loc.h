// RecordLoc: the 16-byte table entry that maps a record ID to its stored bytes
// (docs/format.md §3): offset u64 at 0, phys_length u32 at 8, logic_length u32 at 12.
#pragma once

#include <cstdint>

#include "zrec/format.h"

#include "format/endian.h"
#include "format/layout.h"

namespace zrec::format {

using zrec::RecordLoc;

inline void encode_record_loc(const RecordLoc& loc, uint8_t* out) {
  store_le<uint64_t>(out, loc.offset);
  store_le<uint32_t>(out + 8, loc.phys_length);
  store_le<uint32_t>(out + 12, loc.logic_length);
}

inline RecordLoc decode_record_loc(const uint8_t* in) {
  return {load_le<uint64_t>(in), load_le<uint32_t>(in + 8), load_le<uint32_t>(in + 12)};
}

// Byte offset of RecordLoc[id] in meta.zr. Callers bound id by a validated length.
inline uint64_t record_loc_offset(uint64_t id) { return kTableOffset + kRecordLocSize * id; }

}  // namespace zrec::format
