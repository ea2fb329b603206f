// Samples as sortable entries (see sample_entries.h).
#include "cli/diff/sample_entries.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace zrec::cli {

namespace {

void put_entry_id(uint8_t* p, uint64_t id) {
  for (int i = 7; i >= 0; --i, id >>= 8) p[i] = static_cast<uint8_t>(id);
}

}  // namespace

uint64_t entry_id(const uint8_t* entry) {
  uint64_t id = 0;
  for (int i = 0; i < 8; ++i) id = id << 8 | entry[kEntryHashBytes + i];
  return id;
}

Status feed_entries(const DiffSide& side, const std::string& lead, EntrySorter& sorter, const WalkOptions& o) {
  std::vector<uint8_t> entry(entry_width(o.streams.size()));
  for (uint64_t first = 0; first < side.length; first += o.chunk) {
    const uint64_t count = std::min(o.chunk, side.length - first);
    ZREC_ASSIGN_OR_RETURN(auto leads, record_hashes(*side.find(lead), first, count, o.window_bytes, o.control));
    std::vector<std::vector<RecordHash>> streams;
    for (const std::string& name : o.streams) {
      ZREC_ASSIGN_OR_RETURN(auto hashes, record_hashes(*side.find(name), first, count, o.window_bytes, o.control));
      streams.push_back(std::move(hashes));
    }
    for (uint64_t k = 0; k < count; ++k) {
      std::memcpy(entry.data(), leads[k].data(), kEntryHashBytes);
      put_entry_id(&entry[kEntryHashBytes], first + k);
      for (size_t s = 0; s < streams.size(); ++s)
        std::memcpy(&entry[entry_stream_offset(s)], streams[s][k].data(), kEntryHashBytes);
      ZREC_RETURN_IF_ERROR(sorter.add(entry.data()));
    }
  }
  return sorter.finish();
}

}  // namespace zrec::cli
