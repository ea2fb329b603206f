// Reading the records a `zrec view` request shows: all of a page in one gather on the
// store's lanes, each record with its own outcome, so one record that does not decode is
// shown as such instead of failing its page. Bytes held are reserved in the ByteBudget
// first, and a record larger than kMaxShownRecordBytes is not read at all.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "zrec/status.h"
#include "zrec/store.h"

#include "cli/view/byte_budget.h"

namespace zrec::cli::view {

// Records up to this logical size are read to be shown; larger ones are described by
// their RecordLoc alone (their hex view and .npy download stay available).
inline constexpr uint64_t kMaxShownRecordBytes = uint64_t{256} << 20;

struct ReadRecord {
  uint64_t id = 0;
  Status status;        // reading and decoding it (or its RecordLoc)
  bool loc_ok = false;  // loc is valid (read and checked)
  RecordLoc loc;
  bool read = false;  // bytes hold its logical record
  std::vector<uint64_t> dims;
  const uint8_t* payload = nullptr;  // into the batch's buffer, past a Ragged shape prefix
  uint64_t payload_bytes = 0;
};

class RecordBatch {
 public:
  // Reads `ids` from `store` (each < store.length()); with read_payloads false, only the
  // RecordLocs (and a Dense store's dims). The returned status is an error only when the
  // store could not be read at all; a record's own trouble is in its ReadRecord::status.
  Status read(Store& store, std::span<const uint64_t> ids, ByteBudget& budget, bool read_payloads);
  std::vector<ReadRecord>& records() { return records_; }

 private:
  std::vector<ReadRecord> records_;
  std::vector<uint8_t> buffer_;
  std::optional<ByteBudget::Hold> hold_;
};

}  // namespace zrec::cli::view
