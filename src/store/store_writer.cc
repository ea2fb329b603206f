// The append engine (FORMAT.md §7, §9): windows of records are split into shard-local
// chunks that lanes claim dynamically; each lane encodes a chunk into its own scratch,
// reserves a range at the shard's tail under a short per-shard lock, and writes it
// with one positional write. After the payload barrier the coordinator writes the
// window's RecordLocs with one positional write. Publication rewrites the static page.
#include "zrec/store_writer.h"

#include <sys/uio.h>

#include <bit>
#include <cstring>
#include <mutex>

#include "codec/record_codec.h"
#include "engine/thread_pool.h"
#include "format/record_loc.h"
#include "format/static_page.h"
#include "store/store_files.h"

namespace zrec {

// Ragged dims are handed to the writer as host u64s and written as the LE shape prefix.
static_assert(std::endian::native == std::endian::little, "zrec assumes a little-endian host");

namespace {

// Records of one shard within one window: indices first, first + S, first + 2S, ...
struct Chunk {
  uint32_t shard;
  size_t first;
  size_t count;
};

}  // namespace

struct StoreWriter::Impl {
  store::StoreFiles files;
  WriterOptions options;
  engine::ThreadPool pool;
  // Per-lane state, touched only by its lane inside pool.run().
  std::vector<codec::Encoder> encoders;
  std::vector<std::vector<uint8_t>> scratch;  // encoded chunk
  std::vector<std::vector<uint8_t>> staging;  // one Ragged logical record (prefix + payload)

  // In-process tails; tails[s] is guarded by tail_mu[s] while lanes run.
  std::array<uint64_t, format::kMaxShards> tails{};
  std::unique_ptr<std::mutex[]> tail_mu{new std::mutex[format::kMaxShards]};
  uint64_t length = 0;
  // Window buffers, reused across appends: workers fill disjoint entries of locs.
  std::vector<RecordLoc> locs;
  std::vector<uint8_t> loc_bytes;
  bool failed = false;
  bool closed = false;
  bool dirty = false;  // bytes were written past the published state

  Impl(store::StoreFiles f, const WriterOptions& o) : files(std::move(f)), options(o), pool(engine::write_lanes(o.threads)) {
    tails = files.page.tails;
    length = files.page.length;
  }

  uint64_t logic_length(const RecordRef& r) const {
    return files.schema.is_dense() ? r.size : files.schema.shape_prefix_bytes() + r.size;
  }

  std::vector<Chunk> split(std::span<const RecordRef> records) const {
    std::vector<Chunk> chunks;
    const uint32_t shards = files.page.data_shards;
    for (uint32_t s = 0; s < shards; ++s) {
      size_t k = (s + shards - length % shards) % shards;  // first index whose ID % S == s
      while (k < records.size()) {
        Chunk c{s, k, 0};
        uint64_t bytes = 0;
        for (; k < records.size(); k += shards) {
          const uint64_t n = logic_length(records[k]);
          if (c.count > 0 && bytes + n > options.chunk_bytes) break;
          bytes += n;
          ++c.count;
        }
        chunks.push_back(c);
      }
    }
    return chunks;
  }

  // Reserves n bytes at the end of a shard; returns their offset.
  uint64_t reserve(uint32_t shard, uint64_t n) {
    std::lock_guard<std::mutex> lock(tail_mu[shard]);
    const uint64_t offset = tails[shard];
    tails[shard] += n;
    return offset;
  }

  // Raw: no copy at all; the records' own buffers (and Ragged dims) go to pwritev.
  Status write_raw_chunk(std::span<const RecordRef> records, const Chunk& c) {
    const uint32_t shards = files.page.data_shards;
    const uint64_t prefix = files.schema.shape_prefix_bytes();
    std::vector<iovec> iov;
    iov.reserve(c.count * 2);
    uint64_t total = 0;
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) {
      const RecordRef& r = records[k];
      const uint64_t logic = logic_length(r);
      locs[k] = RecordLoc{total, static_cast<uint32_t>(logic), static_cast<uint32_t>(logic)};
      if (!files.schema.is_dense()) iov.push_back({const_cast<uint64_t*>(r.dims), prefix});
      iov.push_back({const_cast<uint8_t*>(r.data), r.size});
      total += logic;
    }
    const uint64_t base = reserve(c.shard, total);
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) locs[k].offset += base;
    return files.data[c.shard].pwritev_all(iov, base);
  }

  Status write_encoded_chunk(size_t lane, std::span<const RecordRef> records, const Chunk& c) {
    const uint32_t shards = files.page.data_shards;
    codec::Encoder& enc = encoders[lane];
    uint64_t capacity = 0;
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) capacity += enc.bound(logic_length(records[k]));
    auto& out = scratch[lane];
    if (out.size() < capacity) out.resize(capacity);
    uint64_t used = 0;
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) {
      const RecordRef& r = records[k];
      const uint64_t logic = logic_length(r);
      const uint8_t* src = r.data;
      if (!files.schema.is_dense()) {
        // zstd needs the logical record contiguous: shape prefix then payload.
        auto& stage = staging[lane];
        if (stage.size() < logic) stage.resize(logic);
        const uint64_t prefix = files.schema.shape_prefix_bytes();
        std::memcpy(stage.data(), r.dims, prefix);
        std::memcpy(stage.data() + prefix, r.data, r.size);
        src = stage.data();
      }
      ZREC_ASSIGN_OR_RETURN(size_t n, enc.encode(src, logic, out.data() + used, capacity - used));
      if (n > format::kMaxRecordBytes) return invalid_argument("a record compresses to 2 GiB or more");
      locs[k] = RecordLoc{used, static_cast<uint32_t>(n), static_cast<uint32_t>(logic)};
      used += n;
    }
    const uint64_t base = reserve(c.shard, used);
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) locs[k].offset += base;
    Status s = files.data[c.shard].pwrite_all(out.data(), used, base);
    // Keep lane memory near the chunk budget after an oversized record went through.
    if (out.size() > 4 * options.chunk_bytes) std::vector<uint8_t>().swap(out);
    if (staging[lane].size() > 4 * options.chunk_bytes) std::vector<uint8_t>().swap(staging[lane]);
    return s;
  }
};

StoreWriter::StoreWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

StoreWriter::~StoreWriter() {
  if (!impl_->closed) abort();
}

Result<std::unique_ptr<StoreWriter>> StoreWriter::open(const std::string& path, const WriterOptions& options) {
  ZREC_ASSIGN_OR_RETURN(auto files, store::load_store_files(path, io::LockMode::kExclusive, options.wait));
  auto impl = std::make_unique<Impl>(std::move(files), options);
  codec::EncoderOptions eo{impl->files.page.codec, options.level, options.checksum, impl->files.dictionary};
  for (size_t lane = 0; lane < impl->pool.lanes(); ++lane) {
    ZREC_ASSIGN_OR_RETURN(auto enc, codec::Encoder::create(eo));
    impl->encoders.push_back(std::move(enc));
    impl->scratch.emplace_back();
    impl->staging.emplace_back();
  }
  return std::unique_ptr<StoreWriter>(new StoreWriter(std::move(impl)));
}

const Schema& StoreWriter::schema() const { return impl_->files.schema; }
Codec StoreWriter::codec() const { return impl_->files.page.codec; }
uint32_t StoreWriter::data_shards() const { return impl_->files.page.data_shards; }
size_t StoreWriter::lanes() const { return impl_->pool.lanes(); }
uint64_t StoreWriter::length() const { return impl_->length; }
uint64_t StoreWriter::published_length() const { return impl_->files.page.length; }

Status StoreWriter::check(std::span<const RecordRef> records) const {
  const Schema& schema = impl_->files.schema;
  for (size_t k = 0; k < records.size(); ++k) {
    const RecordRef& r = records[k];
    auto bad = [&](const std::string& rule) {
      return invalid_argument("record " + std::to_string(k) + " of this batch " + rule);
    };
    if (r.size == 0 || r.data == nullptr) return bad("is empty (records must be nonempty)");
    if (schema.is_dense()) {
      if (r.size != impl_->files.dense_width)
        return bad("has " + std::to_string(r.size) + " bytes; a record of " + schema.describe() + " has " +
                   std::to_string(impl_->files.dense_width));
      continue;
    }
    if (r.dims == nullptr) return bad("has no shape (a Ragged store needs one)");
    auto volume = checked_volume(std::span<const uint64_t>(r.dims, schema.ndim), schema.dtype.itemsize);
    for (uint32_t d = 0; d < schema.ndim; ++d)
      if (r.dims[d] == 0) return bad("has a zero-length dimension (records must be nonempty)");
    if (!volume || *volume != r.size) return bad("has a payload size that does not match its shape");
    if (schema.shape_prefix_bytes() + r.size > format::kMaxRecordBytes)
      return bad("is 2 GiB or larger (the format's limit per record)");
  }
  return Status::ok();
}

Status StoreWriter::append(std::span<const RecordRef> records) {
  Impl& m = *impl_;
  if (m.closed) return invalid_argument("the writer is closed");
  if (m.failed) return invalid_argument("an earlier append failed; the writer can only abort");
  ZREC_RETURN_IF_ERROR(check(records));
  if (records.empty()) return Status::ok();
  if (m.length + records.size() > (UINT64_MAX - format::kTableOffset) / format::kRecordLocSize)
    return invalid_argument("the store would hold more records than the format can address");

  m.locs.resize(records.size());
  m.dirty = true;
  const auto chunks = m.split(records);
  const bool raw = m.files.page.codec == Codec::kRaw;
  Status s = m.pool.run(chunks.size(), [&](size_t lane, size_t i) {
    return raw ? m.write_raw_chunk(records, chunks[i]) : m.write_encoded_chunk(lane, records, chunks[i]);
  });
  if (s.is_ok()) {
    m.loc_bytes.resize(records.size() * format::kRecordLocSize);
    for (size_t k = 0; k < records.size(); ++k)
      format::encode_record_loc(m.locs[k], &m.loc_bytes[k * format::kRecordLocSize]);
    s = m.files.meta.pwrite_all(m.loc_bytes.data(), m.loc_bytes.size(), format::record_loc_offset(m.length));
  }
  if (!s.is_ok()) {
    m.failed = true;
    return s;
  }
  m.length += records.size();
  return Status::ok();
}

Status StoreWriter::publish() {
  Impl& m = *impl_;
  if (m.closed) return invalid_argument("the writer is closed");
  if (m.failed) return invalid_argument("an earlier append failed; nothing can be published");
  format::StaticPage page = m.files.page;
  page.length = m.length;
  page.tails = m.tails;
  if (page == m.files.page) return Status::ok();  // nothing new to publish
  for (uint32_t s = 0; s < m.files.page.data_shards; ++s) {
    ZREC_RETURN_IF_ERROR(m.files.data[s].truncate(m.tails[s]));
    if (m.options.sync) ZREC_RETURN_IF_ERROR(m.files.data[s].sync());
  }
  ZREC_RETURN_IF_ERROR(m.files.meta.truncate(format::record_loc_offset(m.length)));
  if (m.options.sync) ZREC_RETURN_IF_ERROR(m.files.meta.sync());
  // The publication: one 4096-byte positional write of the static page.
  const auto bytes = format::encode_static_page(page);
  ZREC_RETURN_IF_ERROR(m.files.meta.pwrite_all(bytes.data(), bytes.size(), 0));
  if (m.options.sync) ZREC_RETURN_IF_ERROR(m.files.meta.sync());
  m.files.page = page;
  m.dirty = false;
  return Status::ok();
}

Status StoreWriter::close() {
  Status s = publish();
  if (!s.is_ok()) {
    abort();
    return s;
  }
  impl_->files.meta.close();
  impl_->files.data.clear();
  impl_->closed = true;
  return Status::ok();
}

void StoreWriter::abort() {
  Impl& m = *impl_;
  if (m.closed) return;
  // Best effort: put every file back to its published size, so the store is exactly as
  // it was (a crash would leave ignorable leftovers instead).
  if (m.dirty) {
    for (uint32_t s = 0; s < m.files.page.data_shards && s < m.files.data.size(); ++s)
      (void)m.files.data[s].truncate(m.files.page.tails[s]);
    (void)m.files.meta.truncate(format::record_loc_offset(m.files.page.length));
  }
  m.files.meta.close();
  m.files.data.clear();
  m.closed = true;
}

}  // namespace zrec
