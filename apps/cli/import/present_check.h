// Reruns check what they skip: with --from-length N, the input records a rerun finds
// already in the store (the store's records N, N+1, ...) are compared with the ones it
// holds, so that an input regenerated between a kill and a requeue (another glob,
// another order) is refused at its first differing record instead of having its tail
// appended after the other input's head.
//
// The stored records are gathered in batches of up to kBatchBytes decoded bytes, from a
// read-only snapshot of the store opened while the appending writer holds its lock (the
// length it reads cannot change).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "zrec/format.h"
#include "zrec/status.h"
#include "zrec/store.h"

namespace zrec::cli {

class PresentCheck {
 public:
  // Compares with records [first, first + count) of the store at `path`; `first` is
  // --from-length.
  static Result<std::unique_ptr<PresentCheck>> open(const std::string& path, uint64_t first, uint64_t count);

  // Record `id` (first <= id < first + count; in increasing order, for batches to help)
  // is `payload` (with `dims`, ndim values, for a Ragged store;
  // null for a Dense one): ok, or kInvalidArgument "WHERE differs from record ID of
  // 'STORE' (WHAT): ...", naming the first difference.
  Status expect(uint64_t id, std::span<const uint8_t> payload, const uint64_t* dims, const std::string& where);

  // The stored record `id` (same order rule as expect()), its payload without a Ragged
  // record's shape prefix: valid until the next call. For a caller that words the
  // difference itself (append-tar's keys: "sample 'K' is not sample N ... is 'K2'").
  Result<std::span<const uint8_t>> payload(uint64_t id);

  // The stored payload sizes, from the record table alone (no record is read): record
  // `id` (same order rule) must hold `bytes` bytes of payload; ok, or kInvalidArgument
  // "WHERE is B bytes, but record ID of 'STORE' holds S: ...". For append-files, whose
  // files a rerun passes over unread unless --check-present.
  Status expect_size(uint64_t id, uint64_t bytes, const std::string& where);

 private:
  PresentCheck(std::unique_ptr<Store> store, uint64_t first, uint64_t count);
  Status load(uint64_t id);  // gathers the batch that begins at `id`
  Status check_id(uint64_t id) const;

  static constexpr uint64_t kBatchBytes = uint64_t{8} << 20;
  static constexpr uint64_t kBatchRecords = 4096;

  std::unique_ptr<Store> store_;
  const uint64_t first_, end_;
  std::vector<uint64_t> ids_, offsets_;
  std::vector<RecordLoc> locs_;
  std::vector<uint8_t> data_;
  size_t at_ = 0;  // position in ids_ of the id expect() compares next
  // expect_size(): the table entries of records [locs_first_, locs_first_ + size_locs_.size()).
  std::vector<RecordLoc> size_locs_;
  uint64_t locs_first_ = 0;
};

}  // namespace zrec::cli
