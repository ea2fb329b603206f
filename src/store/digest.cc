// The content digest of a store (include/zrec/digest.h has the definition).
#include "zrec/digest.h"

#include <algorithm>
#include <numeric>

#include "format/sha256.h"

namespace zrec {

namespace {
// IDs digested per step: their RecordLocs (16 bytes each) stay bounded.
constexpr uint64_t kDigestIdChunk = 65536;
}  // namespace

std::string digest_header(const Schema& schema, uint64_t length) {
  std::string h = "zrec-digest-v1\n";
  h += "dtype=" + schema.dtype.str() + "\n";
  h += "ndim=" + std::to_string(schema.ndim) + "\n";
  if (schema.is_dense()) {
    h += "item_shape=";
    for (size_t i = 0; i < schema.item_shape->size(); ++i)
      h += (i ? "," : "") + std::to_string((*schema.item_shape)[i]);
    h += "\n";
  } else {
    h += "ragged\n";
  }
  h += "length=" + std::to_string(length) + "\n";
  return h;
}

Result<RecordHash> digest_store(Store& store, const DigestOptions& options, const Context& ctx) {
  Lanes& pool = *store.lanes();
  format::Sha256 total;
  const uint64_t n = options.id_at ? options.count : store.length();
  total.update(digest_header(store.schema(), n));
  Progress progress;
  progress.total_records = n;
  std::vector<uint64_t> ids;
  std::vector<RecordHash> hashes;
  for (uint64_t first = 0; first < n; first += kDigestIdChunk) {
    const uint64_t count = std::min(kDigestIdChunk, n - first);
    ids.resize(count);
    if (options.id_at) {
      for (uint64_t k = 0; k < count; ++k) ids[k] = options.id_at(first + k);
    } else {
      std::iota(ids.begin(), ids.end(), first);
    }
    ZREC_RETURN_IF_ERROR(store.scan(ids, options.window_bytes, [&](const Window& w) -> Status {
      const size_t m = w.ids.size();
      hashes.resize(m);
      // Blocks of records of about 1 MiB each, so small records don't cost a task each.
      std::vector<size_t> starts = {0};
      for (size_t k = 0, bytes = 0; k < m; ++k) {
        bytes += w.offsets[k + 1] - w.offsets[k];
        if (bytes >= (1u << 20) && k + 1 < m) {
          starts.push_back(k + 1);
          bytes = 0;
        }
      }
      starts.push_back(m);
      ZREC_RETURN_IF_ERROR(pool.run(starts.size() - 1, [&](size_t, size_t b) -> Status {
        for (size_t k = starts[b]; k < starts[b + 1]; ++k)
          hashes[k] = format::Sha256::hash(w.data + w.offsets[k], w.offsets[k + 1] - w.offsets[k]);
        return Status::ok();
      }));
      for (size_t k = 0; k < m; ++k) {
        ZREC_RETURN_IF_ERROR(ctx.control.check());
        total.update(hashes[k].data(), hashes[k].size());
        if (options.per_record) ZREC_RETURN_IF_ERROR(options.per_record(w.ids[k], hashes[k]));
        ++progress.records;
        progress.bytes += w.offsets[k + 1] - w.offsets[k];
        if ((progress.records & 63) == 0 || k + 1 == m) ctx.control.report(progress);
      }
      return Status::ok();
    }));
  }
  return total.finish();
}

std::string hash_to_hex(const RecordHash& hash) { return format::to_hex(hash); }

namespace {

// "<name> <hex>\n" per entry, in the order given (the callers' is the marker's: sorted).
void hash_lines(format::Sha256& sha, const std::vector<NamedHash>& entries) {
  for (const NamedHash& e : entries) sha.update(e.name + " " + hash_to_hex(e.hash) + "\n");
}

}  // namespace

RecordHash digest_dataset(uint64_t length, const std::vector<NamedHash>& streams) {
  format::Sha256 sha;
  sha.update("zrec-root-digest-v1\nlength=" + std::to_string(length) + "\n");
  hash_lines(sha, streams);
  return sha.finish();
}

RecordHash digest_sample(const std::vector<NamedHash>& records) {
  format::Sha256 sha;
  hash_lines(sha, records);
  return sha.finish();
}

}  // namespace zrec
