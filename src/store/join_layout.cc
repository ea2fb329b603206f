// Where every part of a join goes (zrec/join.h): bases, shard rotation and run offsets.
#include <algorithm>

#include "zrec/join.h"

#include "format/layout.h"

namespace zrec {

Result<JoinLayout> join_layout(uint32_t shards, std::span<const JoinPartShape> parts) {
  if (shards < 1 || shards > format::kMaxShards)
    return invalid_argument("shards must be 1..255, not " + std::to_string(shards));
  JoinLayout layout;
  layout.shards = shards;
  layout.tails.assign(shards, 0);
  // The table ends at 4096 + 16 * length: that must fit in 64 bits too.
  constexpr uint64_t kMaxLength = (UINT64_MAX - format::kTableOffset) / format::kRecordLocSize;
  for (size_t k = 0; k < parts.size(); ++k) {
    const JoinPartShape& part = parts[k];
    if (part.tails.size() != shards)
      return invalid_argument("part " + std::to_string(k) + " has " + std::to_string(part.tails.size()) +
                              " data files, the join " + std::to_string(shards));
    if (part.length > kMaxLength - layout.length)
      return invalid_argument("the parts hold more records than a store can address (at part " + std::to_string(k) +
                              ")");
    JoinPartPlace place;
    place.base = layout.length;
    place.offset.resize(shards);
    for (uint32_t s = 0; s < shards; ++s) {
      uint64_t& tail = layout.tails[place.dest_shard(s, shards)];
      if (part.tails[s] > UINT64_MAX - tail)
        return invalid_argument("data file " + std::to_string(place.dest_shard(s, shards)) +
                                " of the join would pass 2^64 bytes (at part " + std::to_string(k) + ")");
      place.offset[s] = tail;
      tail += part.tails[s];
    }
    layout.length += part.length;
    layout.parts.push_back(std::move(place));
  }
  return layout;
}

std::string placement_mismatch(const std::vector<const Store*>& parts) {
  if (parts.empty()) return "";
  const Store& first = *parts.front();
  const std::string a = "'" + first.path() + "'";
  for (const Store* p : parts) {
    const std::string b = "'" + p->path() + "'";
    if (!(p->schema() == first.schema()))
      return b + " has the schema " + p->schema().describe() + ", " + a + " " + first.schema().describe();
    if (p->codec() != first.codec())
      return b + " has codec " + to_string(p->codec()) + ", " + a + " " + to_string(first.codec());
    if (p->data_shards() != first.data_shards())
      return b + " has " + std::to_string(p->data_shards()) + " data files, " + a + " " +
             std::to_string(first.data_shards());
    if (p->dictionary() != first.dictionary()) return b + " has another dictionary than " + a;
    // Writers keep a store's checksum setting, and frame copy re-encodes frames without
    // one into a store that has them: placement keeps every frame as it is.
    if (p->checksum() != first.checksum())
      return b + (p->checksum() ? " has" : " has no") + " content checksums in its frames, " + a +
             (first.checksum() ? " has" : " has not");
  }
  return "";
}

}  // namespace zrec
