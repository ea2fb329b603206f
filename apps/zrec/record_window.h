// A bounded window of records being collected for one StoreWriter::append() call:
// the CLI's input side (npy arrays, files, stream frames) fills it, and it flushes
// itself when the byte or record budget would be exceeded, so memory stays bounded
// by the budget however long the input is.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "zrec/store_writer.h"

namespace zrec::cli {

class RecordWindow {
 public:
  // Records per window are also capped, since each costs bookkeeping besides its bytes.
  static constexpr uint64_t kMaxRecords = uint64_t{1} << 18;

  RecordWindow(StoreWriter& writer, uint64_t budget_bytes);

  // Makes room for `count` records of `bytes_each` payload bytes, flushing first if
  // they would not fit; returns how many (>= 1) may be added now, in one go.
  Result<uint64_t> reserve(uint64_t count, uint64_t bytes_each);

  // Payload destination of the next record (valid until the next reserve/flush).
  uint8_t* next_payload() { return bytes_.data() + used_; }

  // Adds a record whose payload the caller wrote at next_payload(). For Ragged,
  // `dims` holds schema.ndim entries (copied).
  void add(uint64_t bytes, const uint64_t* dims);

  // Appends the collected records to the writer and empties the window.
  Status flush();

  uint64_t records_appended() const { return appended_records_; }
  uint64_t bytes_appended() const { return appended_bytes_; }

 private:
  StoreWriter& writer_;
  const uint64_t budget_;
  const uint32_t ndim_;
  const bool ragged_;
  std::vector<uint8_t> bytes_;
  uint64_t used_ = 0;
  std::vector<uint64_t> offsets_;  // payload offset of each record in bytes_
  std::vector<uint64_t> sizes_;
  std::vector<uint64_t> dims_;     // ndim per record (Ragged)
  std::vector<RecordRef> refs_;
  uint64_t appended_records_ = 0, appended_bytes_ = 0;
};

}  // namespace zrec::cli
