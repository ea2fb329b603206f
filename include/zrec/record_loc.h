// RecordLoc: where one record's stored bytes are (docs/format.md §3).
#pragma once

#include <cstdint>

namespace zrec {

struct RecordLoc {
  uint64_t offset = 0;        // inside data_{id % data_shards}.zr
  uint32_t phys_length = 0;   // stored size (after the codec)
  uint32_t logic_length = 0;  // original size (before the codec)

  friend bool operator==(const RecordLoc&, const RecordLoc&) = default;
};

}  // namespace zrec
