// StoreWriter::pack: records laid out as a raw store holds them, on the caller's thread
// (zrec/store_writer.h, PackedRecords). StoreWriter::append_packed writes them.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "zrec/store_writer.h"

#include "format/shape_prefix.h"

namespace zrec {

Status StoreWriter::pack(std::span<const RecordRef> records, uint64_t first_id, PackedRecords& into) const {
  if (codec() != Codec::kRaw)
    return invalid_argument(std::string("records are packed for a raw store; this one's codec is ") +
                            to_string(codec()));
  ZREC_RETURN_IF_ERROR(check(records));
  const Schema& s = schema();
  const uint64_t prefix = s.is_dense() ? 0 : s.shape_prefix_bytes();
  const uint32_t shards = data_shards();
  const auto first_shard = static_cast<uint32_t>(first_id % shards);
  // Each shard's bytes, then, summed, where each starts.
  into.shard_at_.assign(shards + 1, 0);
  uint32_t shard = first_shard;
  for (const RecordRef& r : records) {
    into.shard_at_[shard + 1] += prefix + r.size;
    if (++shard == shards) shard = 0;
  }
  for (uint32_t k = 0; k < shards; ++k) into.shard_at_[k + 1] += into.shard_at_[k];
  if (into.capacity_ < into.shard_at_[shards]) {
    // With room to spare: batches of about one size would otherwise each be a little
    // larger than the last, and each new buffer is fresh pages to fault in.
    into.capacity_ = std::max(into.shard_at_[shards], into.capacity_ + into.capacity_ / 2);
    into.bytes_ = std::make_unique_for_overwrite<uint8_t[]>(into.capacity_);
  }
  into.first_id_ = first_id;
  into.placed_ = false;
  into.locs_.resize(records.size());
  std::vector<uint64_t> at(into.shard_at_.begin(), into.shard_at_.end() - 1);  // each shard's next byte
  shard = first_shard;
  for (size_t k = 0; k < records.size(); ++k) {
    const RecordRef& r = records[k];
    uint8_t* p = into.bytes_.get() + at[shard];
    format::put_shape_prefix(p, r.dims, prefix);
    std::memcpy(p + prefix, r.data, r.size);
    const auto logic = static_cast<uint32_t>(prefix + r.size);  // check(): under 2 GiB
    into.locs_[k] = RecordLoc{at[shard] - into.shard_at_[shard], logic, logic};
    at[shard] += logic;
    if (++shard == shards) shard = 0;
  }
  return Status::ok();
}

}  // namespace zrec
