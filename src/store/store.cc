// The read side: open, table access, parallel gather and windowed scans (FORMAT.md §8, §9).
#include "zrec/store.h"

#include <algorithm>

#include "codec/record_codec.h"
#include "engine/thread_pool.h"
#include "format/endian.h"
#include "format/record_loc.h"
#include "store/store_files.h"

namespace zrec {

namespace {
// IDs whose RecordLocs one scan step loads before cutting windows: 1 MiB of table.
constexpr uint64_t kLocChunk = 65536;
// Blocks per lane in a gather: enough for dynamic balancing, few enough to stay cheap.
constexpr size_t kBlocksPerLane = 4;
}  // namespace

struct Store::Impl {
  store::StoreFiles files;
  engine::ThreadPool pool;
  // Per-lane state, indexed by lane; each touched only by its lane during run().
  std::vector<codec::Decoder> decoders;
  std::vector<std::vector<uint8_t>> scratch;

  Impl(store::StoreFiles f, size_t lanes) : files(std::move(f)), pool(lanes) {
    for (size_t i = 0; i < pool.lanes(); ++i) {
      decoders.emplace_back(files.page.codec, files.dictionary);
      scratch.emplace_back();
    }
  }

  // Reads and decodes one record whose location is known into dst.
  Status read_record(size_t lane, uint64_t id, const RecordLoc& loc, uint8_t* dst) {
    ZREC_RETURN_IF_ERROR(store::check_record_loc(files, files.page.tails.data(), id, loc));
    const io::File& data = files.data[id % files.page.data_shards];
    if (files.page.codec == Codec::kRaw) {
      ZREC_RETURN_IF_ERROR(data.pread_exact(dst, loc.logic_length, loc.offset));
    } else {
      // Performance note: scratch only grows, so steady-state gathers never allocate.
      auto& buf = scratch[lane];
      if (buf.size() < loc.phys_length) buf.resize(loc.phys_length);
      ZREC_RETURN_IF_ERROR(data.pread_exact(buf.data(), loc.phys_length, loc.offset));
      Status s = decoders[lane].decode(buf.data(), loc.phys_length, dst, loc.logic_length);
      if (!s.is_ok())
        return store::malformed_store(files.path, format::data_file_name(id % files.page.data_shards) +
                                                      ": record " + std::to_string(id) + " (offset " +
                                                      std::to_string(loc.offset) + "): " + s.message());
    }
    if (!files.schema.is_dense()) return store::check_ragged_prefix(files, id, dst, loc.logic_length);
    return Status::ok();
  }

  Result<RecordLoc> read_loc(uint64_t id) const {
    uint8_t buf[format::kRecordLocSize];
    ZREC_RETURN_IF_ERROR(files.meta.pread_exact(buf, sizeof buf, format::record_loc_offset(id)));
    return format::decode_record_loc(buf);
  }

  // Splits [0, n) into contiguous blocks for the lanes.
  size_t block_size(size_t n) const { return std::max<size_t>(1, (n + pool.lanes() * kBlocksPerLane - 1) / (pool.lanes() * kBlocksPerLane)); }

  Status check_ids(std::span<const uint64_t> ids) const {
    for (uint64_t id : ids)
      if (id >= files.page.length)
        return invalid_argument("record " + std::to_string(id) + " is out of range for store '" + files.path +
                                "' of " + std::to_string(files.page.length) + " records");
    return Status::ok();
  }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::open(const std::string& path, const OpenOptions& options) {
  ZREC_ASSIGN_OR_RETURN(auto files, store::load_store_files(path, io::LockMode::kShared, options.wait));
  auto impl = std::make_unique<Impl>(std::move(files), engine::read_lanes(options.threads));
  return std::unique_ptr<Store>(new Store(std::move(impl)));
}

const std::string& Store::path() const { return impl_->files.path; }
uint64_t Store::length() const { return impl_->files.page.length; }
const Schema& Store::schema() const { return impl_->files.schema; }
Codec Store::codec() const { return impl_->files.page.codec; }
uint32_t Store::data_shards() const { return impl_->files.page.data_shards; }
uint64_t Store::tail(uint32_t shard) const { return impl_->files.page.tails[shard]; }
uint64_t Store::dict_bytes() const { return impl_->files.dictionary ? impl_->files.dictionary->bytes().size() : 0; }
size_t Store::lanes() const { return impl_->pool.lanes(); }

std::vector<std::pair<std::string, uint64_t>> Store::file_sizes() const {
  std::vector<std::pair<std::string, uint64_t>> out;
  auto add = [&](const std::string& name, const io::File& f) {
    auto size = f.size();
    out.emplace_back(name, size.is_ok() ? size.value() : 0);
  };
  add(format::kMetaFile, impl_->files.meta);
  for (uint32_t s = 0; s < data_shards(); ++s) add(format::data_file_name(s), impl_->files.data[s]);
  if (impl_->files.dictionary) out.emplace_back(format::kDictFile, impl_->files.dictionary->bytes().size());
  return out;
}

Status Store::read_locs(uint64_t first, uint64_t count, RecordLoc* out) const {
  if (count == 0) return Status::ok();
  if (first > length() || count > length() - first)
    return invalid_argument("records " + std::to_string(first) + ".." + std::to_string(first + count) +
                            " are out of range for a store of " + std::to_string(length()) + " records");
  std::vector<uint8_t> bytes(count * format::kRecordLocSize);
  ZREC_RETURN_IF_ERROR(impl_->files.meta.pread_exact(bytes.data(), bytes.size(), format::record_loc_offset(first)));
  for (uint64_t k = 0; k < count; ++k) {
    out[k] = format::decode_record_loc(&bytes[k * format::kRecordLocSize]);
    ZREC_RETURN_IF_ERROR(store::check_record_loc(impl_->files, impl_->files.page.tails.data(), first + k, out[k]));
  }
  return Status::ok();
}

Status Store::gather(std::span<const uint64_t> ids, const RecordLoc* locs, uint8_t* dest,
                     std::span<const uint64_t> dest_offsets) {
  Impl& m = *impl_;
  ZREC_RETURN_IF_ERROR(m.check_ids(ids));
  if (dest_offsets.empty() && !m.files.schema.is_dense())
    return invalid_argument("gather from a Ragged store needs destination offsets");
  const size_t n = ids.size();
  const size_t block = m.block_size(n);
  const size_t blocks = (n + block - 1) / block;
  const uint64_t width = m.files.dense_width;
  return m.pool.run(blocks, [&](size_t lane, size_t b) -> Status {
    const size_t end = std::min(n, (b + 1) * block);
    for (size_t k = b * block; k < end; ++k) {
      RecordLoc loc;
      if (locs != nullptr) {
        loc = locs[k];
      } else {
        ZREC_ASSIGN_OR_RETURN(loc, m.read_loc(ids[k]));
      }
      uint8_t* dst;
      if (dest_offsets.empty()) {
        dst = dest + k * width;
      } else {
        if (dest_offsets[k + 1] - dest_offsets[k] != loc.logic_length) {
          ZREC_RETURN_IF_ERROR(store::check_record_loc(m.files, m.files.page.tails.data(), ids[k], loc));
          return invalid_argument("destination slot of record " + std::to_string(ids[k]) +
                                  " does not match its logic_length");
        }
        dst = dest + dest_offsets[k];
      }
      ZREC_RETURN_IF_ERROR(m.read_record(lane, ids[k], loc, dst));
    }
    return Status::ok();
  });
}

Status Store::scan(std::span<const uint64_t> ids, uint64_t window_bytes,
                   const std::function<Status(const Window&)>& fn) {
  Impl& m = *impl_;
  ZREC_RETURN_IF_ERROR(m.check_ids(ids));
  std::vector<RecordLoc> locs;
  std::vector<uint64_t> offsets;
  std::vector<uint8_t> buffer;
  for (uint64_t chunk = 0; chunk < ids.size(); chunk += kLocChunk) {
    const uint64_t count = std::min<uint64_t>(kLocChunk, ids.size() - chunk);
    auto chunk_ids = ids.subspan(chunk, count);
    locs.resize(count);
    // A run of consecutive IDs (the common `cat` of a range) loads its table slice in
    // one read; any other selection reads each RecordLoc on the lanes.
    const bool consecutive = chunk_ids.back() >= chunk_ids.front() &&
                             chunk_ids.back() - chunk_ids.front() == count - 1 &&
                             std::adjacent_find(chunk_ids.begin(), chunk_ids.end(),
                                                [](uint64_t a, uint64_t b) { return b != a + 1; }) == chunk_ids.end();
    if (consecutive) {
      ZREC_RETURN_IF_ERROR(read_locs(chunk_ids.front(), count, locs.data()));
    } else {
      const size_t block = m.block_size(count);
      ZREC_RETURN_IF_ERROR(m.pool.run((count + block - 1) / block, [&](size_t, size_t b) -> Status {
        for (size_t k = b * block; k < std::min<size_t>(count, (b + 1) * block); ++k) {
          ZREC_ASSIGN_OR_RETURN(locs[k], m.read_loc(chunk_ids[k]));
          ZREC_RETURN_IF_ERROR(store::check_record_loc(m.files, m.files.page.tails.data(), chunk_ids[k], locs[k]));
        }
        return Status::ok();
      }));
    }
    // Cut windows of at most window_bytes logical bytes (at least one record each).
    for (uint64_t begin = 0; begin < count;) {
      uint64_t end = begin, bytes = 0;
      offsets.assign(1, 0);
      while (end < count && (end == begin || bytes + locs[end].logic_length <= window_bytes)) {
        bytes += locs[end].logic_length;
        offsets.push_back(bytes);
        ++end;
      }
      if (buffer.size() < bytes) buffer.resize(bytes);
      auto window_ids = chunk_ids.subspan(begin, end - begin);
      ZREC_RETURN_IF_ERROR(gather(window_ids, locs.data() + begin, buffer.data(), offsets));
      ZREC_RETURN_IF_ERROR(fn(Window{window_ids, buffer.data(), offsets, chunk + begin}));
      begin = end;
    }
  }
  return Status::ok();
}

std::vector<uint64_t> ragged_dims(const Schema& schema, const uint8_t* record) {
  std::vector<uint64_t> dims(schema.ndim);
  for (uint32_t d = 0; d < schema.ndim; ++d) dims[d] = format::load_le<uint64_t>(record + 8 * d);
  return dims;
}

}  // namespace zrec
