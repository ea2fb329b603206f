// verify_store()'s payload pass: every record with a sound RecordLoc read, decoded and
// checked (and compared with its recorded digest) on all lanes (verifier.h).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "zrec/lanes.h"

#include "store/verifier.h"

namespace zrec::store::verifying {

// Reads, decodes and checks one record on a lane, and compares its SHA-256 with
// `expected` unless that is null. Problems in the record go to the lane; the returned
// Status is an I/O failure that stops the run.
Status Verifier::check_payload(Lane& lane, uint64_t id, const RecordLoc& loc, const RecordDigests::Hash* expected) {
  const uint32_t shard = static_cast<uint32_t>(id % shards_);
  const bool raw = files_.page.codec == Codec::kRaw;
  auto problem = [&](const char* rule, const std::string& text) {
    lane.problems.push_back({rule, where(id, shard, loc.offset) + ": " + text, id, shard, loc.offset});
  };
  if (lane.stored.size() < loc.phys_length) lane.stored.resize(loc.phys_length);
  ZREC_RETURN_IF_ERROR(files_.data_file(shard).pread_exact(lane.stored.data(), loc.phys_length, loc.offset));
  lane.stored_bytes += loc.phys_length;
  const uint8_t* record = lane.stored.data();
  if (!raw) {
    if (lane.logical_capacity < loc.logic_length) {
      lane.logical.reset();
      lane.logical = std::make_unique_for_overwrite<uint8_t[]>(loc.logic_length);
      lane.logical_capacity = loc.logic_length;
    }
    Status s = lane.decoder.decode(lane.stored.data(), loc.phys_length, lane.logical.get(), loc.logic_length);
    if (codec::frame_has_checksum(lane.stored.data(), loc.phys_length).value_or(false)) ++lane.checksummed;
    if (!s.is_ok()) {
      problem("decode", s.message());
      return Status::ok();
    }
    record = lane.logical.get();
  }
  ++lane.decoded;
  lane.logical_bytes += loc.logic_length;
  if (!files_.schema.is_dense()) {
    if (auto broken = ragged_prefix_rule(files_, record, loc.logic_length)) problem(broken->key, broken->text);
  }
  if (expected != nullptr) {
    lane.sha.update(record, loc.logic_length);
    const auto hash = lane.sha.finish();
    ++lane.compared;
    if (hash != *expected)
      problem("digest",
              "its bytes changed: SHA-256 " + format::to_hex(hash) + ", recorded " + format::to_hex(*expected));
  }
  // Keep lane memory near the common record size after an outsized record.
  if (lane.stored.capacity() > kKeepBufferBytes) std::vector<uint8_t>().swap(lane.stored);
  if (lane.logical_capacity > kKeepBufferBytes) {
    lane.logical.reset();
    lane.logical_capacity = 0;
  }
  return Status::ok();
}

// The payload pass: every record whose RecordLoc is sound is read and checked, on all
// lanes. The digests of `against` are read a table chunk at a time, before the chunk's
// records are handed to the lanes: whatever order the lanes take them in, the chunk's
// digests are in memory (2 MiB), and the list is read once, from its start, in order
// (holding it whole took 32 bytes a record: 3.2 GB at 10^8).
Status Verifier::payload_pass() {
  const uint64_t n = files_.page.length;
  Lanes& pool = *lanes_;
  std::vector<Lane> lanes;
  for (size_t i = 0; i < pool.count(); ++i) lanes.push_back(Lane{codec::Decoder(files_.page.codec, files_.dictionary)});
  std::vector<RecordLoc> locs;
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> batch;               // indices into locs
  std::vector<VerifyProblem> found;          // one batch's, at most kBatchBytes' worth of records
  std::vector<RecordDigests::Hash> digests;  // the chunk's, from `against`
  progress("records", 0, n);
  for (uint64_t first = 0; first < n && !stopped(); first += kLocChunk) {
    const uint64_t count = std::min(kLocChunk, n - first);
    ZREC_RETURN_IF_ERROR(read_locs(first, count, locs, bytes));
    if (opt_.against != nullptr) ZREC_RETURN_IF_ERROR(opt_.against->next(count, digests));
    for (uint64_t begin = 0; begin < count && !stopped();) {
      ZREC_RETURN_IF_ERROR(check_cancelled());
      // A batch: sound records up to kBatchBytes of stored bytes (at least one).
      batch.clear();
      uint64_t batch_bytes = 0, end = begin;
      for (; end < count && (batch.empty() || batch_bytes < kBatchBytes); ++end) {
        if (loc_rule(first + end, locs[end])) continue;  // reported by the table pass
        batch.push_back(end);
        batch_bytes += locs[end].phys_length;
      }
      const size_t m = batch.size();
      const size_t block =
          std::max<size_t>(1, (m + pool.count() * kBlocksPerLane - 1) / (pool.count() * kBlocksPerLane));
      ZREC_RETURN_IF_ERROR(pool.run((m + block - 1) / block, [&](size_t lane, size_t b) -> Status {
        for (size_t i = b * block; i < std::min(m, (b + 1) * block); ++i)
          ZREC_RETURN_IF_ERROR(check_payload(lanes[lane], first + batch[i], locs[batch[i]],
                                             batch[i] < digests.size() ? &digests[batch[i]] : nullptr));
        return Status::ok();
      }));
      found.clear();
      for (Lane& lane : lanes) {
        std::move(lane.problems.begin(), lane.problems.end(), std::back_inserter(found));
        lane.problems.clear();
      }
      std::stable_sort(found.begin(), found.end(),
                       [](const VerifyProblem& a, const VerifyProblem& b) { return *a.id < *b.id; });
      for (auto& p : found)
        if (!add(std::move(p))) break;
      begin = end;
      uint64_t bytes_read = 0;
      for (const Lane& lane : lanes) bytes_read += lane.stored_bytes;
      progress("records", first + end, n, bytes_read);
    }
  }
  for (const Lane& lane : lanes) {
    rep_.records_decoded += lane.decoded;
    rep_.stored_bytes_read += lane.stored_bytes;
    rep_.logical_bytes += lane.logical_bytes;
    rep_.records_with_checksum += lane.checksummed;
    rep_.digests_compared += lane.compared;
  }
  return Status::ok();
}

}  // namespace zrec::store::verifying
