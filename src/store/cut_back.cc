// cut_back_store: publish a store's first records only (see store/cut_back.h).
#include "store/cut_back.h"

#include <algorithm>
#include <array>
#include <vector>

#include "format/record_loc.h"
#include "format/static_page.h"
#include "store/store_files.h"

namespace zrec {

namespace store {

Status cut_back_files(StoreFiles& files, uint64_t length) {
  const std::string& path = files.path;
  const format::StaticPage old = files.page;
  if (length > old.length)
    return invalid_argument("cannot cut '" + path + "' back to " + std::to_string(length) + " records: it holds " +
                            std::to_string(old.length));
  if (length == old.length) return Status::ok();
  const store::ChecksumSetting setting = store::read_checksum_setting(files);

  // Each shard's new tail: the end of the furthest record it keeps. Records of one
  // shard need not lie in ID order (lanes reserve chunks concurrently), so every kept
  // RecordLoc is read, in blocks.
  std::array<uint64_t, format::kMaxShards> tails{};
  constexpr uint64_t kBlock = uint64_t{1} << 16;
  std::vector<uint8_t> buf;
  for (uint64_t first = 0; first < length; first += kBlock) {
    const uint64_t n = std::min(kBlock, length - first);
    buf.resize(n * format::kRecordLocSize);
    ZREC_RETURN_IF_ERROR(files.meta.pread_exact(buf.data(), buf.size(), format::record_loc_offset(first)));
    for (uint64_t k = 0; k < n; ++k) {
      const uint64_t id = first + k;
      const RecordLoc loc = format::decode_record_loc(&buf[k * format::kRecordLocSize]);
      ZREC_RETURN_IF_ERROR(store::check_record_loc(files, old.tails.data(), id, loc));
      const uint32_t shard = static_cast<uint32_t>(id % old.data_shards);
      tails[shard] = std::max(tails[shard], loc.offset + loc.phys_length);
    }
  }

  format::StaticPage page = old;
  page.length = length;
  page.tails = tails;
  // The publication first: from here on readers see the first `length` records.
  const auto bytes = format::encode_static_page(page);
  ZREC_RETURN_IF_ERROR(files.meta.pwrite_all(bytes.data(), bytes.size(), 0));
  ZREC_RETURN_IF_ERROR(files.meta.sync());
  files.page = page;
  // Then the leftovers go, as a writer's publish() leaves files: data files end at
  // their tails and the table at `length` entries.
  for (uint32_t s = 0; s < old.data_shards; ++s) {
    ZREC_RETURN_IF_ERROR(files.data[s].truncate(tails[s]));
    ZREC_RETURN_IF_ERROR(files.data[s].sync());
  }
  ZREC_RETURN_IF_ERROR(files.meta.truncate(format::record_loc_offset(length)));
  // An empty store keeps its zstd checksum setting as the marker in RecordLoc[0].
  if (length == 0 && setting.checksum) ZREC_RETURN_IF_ERROR(store::write_checksum_marker(files.meta));
  return files.meta.sync();
}

}  // namespace store

Status cut_back_store(const std::string& path, uint64_t length, const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(store::StoreFiles files, store::load_store_files(path, io::LockMode::kExclusive, ctx));
  return store::cut_back_files(files, length);
}

}  // namespace zrec
