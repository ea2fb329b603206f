// RecordBatch (see record_reader.h).
#include "cli/view/record_reader.h"

namespace zrec::cli::view {

Status RecordBatch::read(Store& store, std::span<const uint64_t> ids, ByteBudget& budget, bool read_payloads) {
  const Schema& schema = store.schema();
  records_.assign(ids.size(), {});
  std::vector<RecordLoc> locs(ids.size());
  const Status batch_locs = store.read_locs(ids, locs.data());
  for (size_t k = 0; k < ids.size(); ++k) {
    ReadRecord& r = records_[k];
    r.id = ids[k];
    r.status = batch_locs.is_ok() ? Status::ok() : store.read_locs(std::span<const uint64_t>(&ids[k], 1), &locs[k]);
    r.loc_ok = r.status.is_ok();
    r.loc = locs[k];
    if (r.loc_ok && schema.is_dense()) r.dims = *schema.item_shape;
  }
  if (!read_payloads) return Status::ok();

  // The records to read, and where each goes in one buffer.
  std::vector<uint64_t> read_ids, offsets;
  std::vector<RecordLoc> read_locs;
  std::vector<size_t> which;
  uint64_t total = 0;
  for (size_t k = 0; k < records_.size(); ++k) {
    const ReadRecord& r = records_[k];
    if (!r.loc_ok || r.loc.logic_length > kMaxShownRecordBytes) continue;
    read_ids.push_back(r.id);
    read_locs.push_back(r.loc);
    offsets.push_back(total);
    which.push_back(k);
    total += r.loc.logic_length;
  }
  offsets.push_back(total);  // gather takes ids.size() + 1 offsets: each slot's start and end
  hold_.reset();
  hold_.emplace(budget.reserve(total));
  buffer_.resize(total);
  Status s = store.gather(read_ids, read_locs.data(), buffer_.data(), offsets);
  for (size_t i = 0; i < read_ids.size(); ++i) {
    ReadRecord& r = records_[which[i]];
    // The batch failed: each record alone, to tell which ones are at fault.
    const uint64_t slot[2] = {0, read_locs[i].logic_length};
    r.status = s.is_ok() ? Status::ok()
                         : store.gather(std::span<const uint64_t>(&read_ids[i], 1), &read_locs[i],
                                        buffer_.data() + offsets[i], slot);
    if (!r.status.is_ok()) continue;
    r.read = true;
    const uint8_t* record = buffer_.data() + offsets[i];
    const uint64_t prefix = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
    if (!schema.is_dense()) r.dims = ragged_dims(schema, record);
    r.payload = record + prefix;
    r.payload_bytes = r.loc.logic_length - prefix;
  }
  return Status::ok();
}

}  // namespace zrec::cli::view
