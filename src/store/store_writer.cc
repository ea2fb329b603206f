// The append engine (docs/format.md §7, §9): windows of records are split into shard-local
// chunks that lanes claim dynamically; each lane encodes a chunk into its own scratch,
// reserves a range at the shard's tail under a short per-shard lock, and writes it
// with one positional write. After the payload barrier the coordinator writes the
// window's RecordLocs with one positional write. Publication rewrites the static page.
#include "zrec/store_writer.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <functional>
#include <mutex>

#include "zrec/codec_choice.h"
#include "zrec/dataset.h"

#include "codec/record_codec.h"
#include "format/record_loc.h"
#include "format/shape_prefix.h"
#include "format/static_page.h"
#include "io/copy_range.h"
#include "io/iovec_pack.h"
#include "io/write_behind.h"
#include "store/store_files.h"

namespace zrec {

// Ragged dims are handed to the writer as host u64s and written as the LE shape prefix.
static_assert(std::endian::native == std::endian::little, "zrec assumes a little-endian host");
// ... and a RecordLoc in memory is then byte for byte its table entry (docs/format.md §8),
// so a window's locations are written from locs as they are.
static_assert(sizeof(RecordLoc) == format::kRecordLocSize && offsetof(RecordLoc, offset) == 0 &&
              offsetof(RecordLoc, phys_length) == 8 && offsetof(RecordLoc, logic_length) == 12);

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
  std::shared_ptr<Lanes> pool;  // the executor, shared with whoever gave it
  // Per-lane state, touched only by its lane inside pool.run().
  std::vector<codec::Encoder> encoders;
  std::vector<std::vector<uint8_t>> scratch;  // encoded chunk, or packed small raw records
  std::vector<std::vector<uint8_t>> staging;  // one Ragged logical record (prefix + payload)
  std::vector<std::vector<iovec>> iovs;       // the gather list of a verbatim chunk

  // In-process tails; tails[s] is guarded by tail_mu[s] while lanes run.
  std::array<uint64_t, format::kMaxShards> tails{};
  std::unique_ptr<std::mutex[]> tail_mu{new std::mutex[format::kMaxShards]};
  uint64_t length = 0;
  // Window buffer, reused across appends: workers fill disjoint entries of locs.
  std::vector<RecordLoc> locs;
  // Where each file's early writeback resumes (start_early_writeback).
  std::array<uint64_t, format::kMaxShards> writeback_from{};
  uint64_t meta_writeback_from = 0;
  // Atomic: the two steps of a packed append (write_packed_payload, write_packed_table)
  // may run on two threads at once, and either may fail or write.
  std::atomic<bool> failed = false;
  bool closed = false;
  std::atomic<bool> dirty = false;  // bytes were written past the published state
  // Records whose payload is written: `length`, and past it a packed batch whose table
  // is not (write_packed_payload). Moved by the payload step, and set to `length` where
  // that moves with its payload (write_window, open, cut_back).
  std::atomic<uint64_t> payload_end = 0;
  bool keep_sizes = false;       // a page write of unknown outcome: abort must not shorten any file
  bool checksum = false;         // frames get a zstd content checksum
  bool checksum_marker = false;  // the empty store holds the checksum marker (abort restores it)
  // `--codec auto` (docs/format.md §6): the codec records are appended in, which the
  // next publication writes into the page; `choose` until the first window chose it.
  Codec codec = Codec::kZstd;
  bool choose = false;
  bool dict_written = false;  // this writer wrote dict.zr, which no published page names yet
  std::optional<CodecChoice> choice;
  // While `choose`: copies of the records appended so far, when they are fewer than the
  // window a choice is made from (kAutoWindowBytes, kAutoWindowRecords); not written yet.
  struct Held {
    std::vector<uint8_t> bytes;
    std::vector<uint64_t> dims;  // schema.ndim per record (Ragged)
  };
  std::vector<Held> held;
  uint64_t held_bytes = 0;

  Impl(store::StoreFiles f, const WriterOptions& o, const std::shared_ptr<Lanes>& lanes)
      : files(std::move(f)), options(o), pool(lanes ? lanes : std::make_shared<Lanes>(write_lane_budget())) {
    tails = files.page.tails;
    length = files.page.length;
    codec = files.page.codec;
    payload_end = length;
    writeback_from = tails;
    meta_writeback_from = format::record_loc_offset(length);
  }

  uint64_t logic_length(const RecordRef& r) const {
    return files.schema.is_dense() ? r.size : files.schema.shape_prefix_bytes() + r.size;
  }

  // Cuts a window of n records, IDs first_id..., into shard-local chunks of about
  // chunk_bytes, measured by bytes_of(k) (a record's logical size, or its stored size
  // when copying frames).
  template <typename BytesOf>
  std::vector<Chunk> split(uint64_t first_id, size_t count, BytesOf&& bytes_of) const {
    std::vector<Chunk> chunks;
    const uint32_t shards = files.page.data_shards;
    for (uint32_t s = 0; s < shards; ++s) {
      size_t k = (s + shards - first_id % shards) % shards;  // first index whose ID % S == s
      while (k < count) {
        Chunk c{s, k, 0};
        uint64_t bytes = 0;
        for (; k < count; k += shards) {
          const uint64_t n = bytes_of(k);
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

  // Stored bytes that already exist in memory (raw records, or frames being copied)
  // need no encoding: `pieces(k, iov)` appends record k's buffers to iov and returns
  // its phys and logic lengths, and the chunk goes out in one pwritev, with small
  // buffers packed into the lane's scratch first (io/iovec_pack.h).
  template <typename Pieces>
  Status write_verbatim_chunk(size_t lane, const Chunk& c, Pieces&& pieces) {
    const uint32_t shards = files.page.data_shards;
    std::vector<iovec>& iov = iovs[lane];
    iov.clear();
    uint64_t total = 0;
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) {
      locs[k] = pieces(k, iov);
      locs[k].offset = total;
      total += locs[k].phys_length;
    }
    const uint64_t base = reserve(c.shard, total);
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) locs[k].offset += base;
    io::pack_small_iovecs(iov, scratch[lane]);
    Status s = files.data[c.shard].pwritev_all(iov, base);
    if (scratch[lane].size() > 4 * options.chunk_bytes) std::vector<uint8_t>().swap(scratch[lane]);
    return s;
  }

  // Whether a chunk of records that lie in another file is copied kernel-side
  // (write_copied_chunk) rather than written from their bytes in memory: always when
  // the caller has no bytes in memory; otherwise when the records form runs adjacent
  // both there and here of kMinKernelCopyRun bytes on average.
  // Performance note: copy_file_range without reflinks is a page-by-page splice, and
  // one call per record of a reshard (no two neighbours of a DST chunk are neighbours
  // in SRC) cost 16x `cp` for 60-byte zstd frames (one syscall each) and 8% more than
  // pwritev for 100 KiB ones. Long runs keep it: where the file system shares extents
  // (XFS, Btrfs), copy_file_range copies no data at all.
  static constexpr uint64_t kMinKernelCopyRun = uint64_t{1} << 20;
  // Whether r's stored bytes follow prev's in the same source file (one copy_file_range).
  static bool continues_run(const EncodedRecord& prev, const EncodedRecord& r) {
    return r.src_fd == prev.src_fd && r.src_offset == prev.src_offset + prev.phys_length;
  }
  bool copy_kernel_side(std::span<const EncodedRecord> records, const Chunk& c) const {
    const uint32_t shards = files.page.data_shards;
    if (records[c.first].data == nullptr) return true;
    uint64_t runs = 0, bytes = 0;
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) {
      if (j == 0 || !continues_run(records[k - shards], records[k])) ++runs;
      bytes += records[k].phys_length;
    }
    return bytes >= runs * kMinKernelCopyRun;
  }

  // Records whose stored bytes lie in another file: copied kernel-side, one
  // copy_file_range per run of records adjacent both there and in this chunk.
  Status write_copied_chunk(std::span<const EncodedRecord> records, const Chunk& c) {
    const uint32_t shards = files.page.data_shards;
    uint64_t total = 0;
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) {
      locs[k] = RecordLoc{total, records[k].phys_length, records[k].logic_length};
      total += records[k].phys_length;
    }
    const uint64_t base = reserve(c.shard, total);
    for (size_t j = 0, k = c.first; j < c.count;) {
      const EncodedRecord& first = records[k];
      if (first.src_fd < 0) return invalid_argument("a window mixes copied and written stored records");
      uint64_t run = first.phys_length;
      locs[k].offset += base;
      const uint64_t at = locs[k].offset;
      for (++j, k += shards; j < c.count; ++j, k += shards) {
        if (!continues_run(records[k - shards], records[k])) break;
        locs[k].offset += base;
        run += records[k].phys_length;
      }
      ZREC_RETURN_IF_ERROR(
          io::copy_range(first.src_fd, "source data file", first.src_offset, files.data[c.shard], at, run));
    }
    return Status::ok();
  }

  // Raw: the stored bytes are the logical records themselves. In one pass over the
  // chunk, small pieces (Ragged shape prefixes, records under io::kCopyBelowBytes) are
  // copied into the lane's scratch, where consecutive ones form one run, and larger
  // records are referenced where they lie; the chunk then goes out in one pwritev.
  // (Records a caller packed as stored, StoreWriter::pack, skip all this:
  // write_packed_chunk.)
  // Performance note: this is io::pack_small_iovecs fused into the loop that sets the
  // RecordLocs, without a gather list of two entries per record to build and walk again
  // (for ~100-byte lines the list was as large as the lines).
  Status write_raw_chunk(size_t lane, std::span<const RecordRef> records, const Chunk& c) {
    const uint32_t shards = files.page.data_shards;
    const uint64_t prefix = files.schema.is_dense() ? 0 : files.schema.shape_prefix_bytes();
    // Bytes copied into scratch, so it is sized once and never moves under the iovecs,
    // and the chunk's bytes, so its place is reserved before the RecordLocs are set.
    uint64_t copied = 0, total = 0;
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) {
      total += prefix + records[k].size;
      copied += prefix + (records[k].size < io::kCopyBelowBytes ? records[k].size : 0);
    }
    const uint64_t base = reserve(c.shard, total);
    auto& out = scratch[lane];
    if (out.size() < copied) out.resize(copied);
    std::vector<iovec>& iov = iovs[lane];
    iov.clear();
    uint64_t used = 0, run = 0, at = base;  // scratch filled, start of its open run, next offset
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) {
      const RecordRef& r = records[k];
      const auto logic = static_cast<uint32_t>(prefix + r.size);
      locs[k] = RecordLoc{at, logic, logic};
      at += logic;
      format::put_shape_prefix(out.data() + used, r.dims, prefix);
      used += prefix;
      if (r.size < io::kCopyBelowBytes) {
        std::memcpy(out.data() + used, r.data, r.size);
        used += r.size;
        continue;
      }
      if (used > run) iov.push_back({out.data() + run, used - run});
      iov.push_back({const_cast<uint8_t*>(r.data), r.size});
      run = used;
    }
    if (used > run) iov.push_back({out.data() + run, used - run});
    Status s = files.data[c.shard].pwritev_all(iov, base);
    if (out.size() > 4 * options.chunk_bytes) std::vector<uint8_t>().swap(out);
    return s;
  }

  // A shard's records packed by StoreWriter::pack: their RecordLocs moved to where the
  // shard's bytes land, then those bytes in one write.
  Status write_packed_chunk(PackedRecords& packed, const Chunk& c) {
    const uint32_t shards = files.page.data_shards;
    const uint64_t start = packed.shard_at_[c.shard], bytes = packed.shard_at_[c.shard + 1] - start;
    const uint64_t base = reserve(c.shard, bytes);
    for (size_t j = 0, k = c.first; j < c.count; ++j, k += shards) packed.locs_[k].offset += base;
    return files.data[c.shard].pwrite_all(packed.bytes_.get() + start, bytes, base);
  }

  Status table_pending() const {
    return invalid_argument("records " + std::to_string(length) + ".." + std::to_string(payload_end - 1) +
                            " have their payload written and not their RecordLocs (write_packed_table)");
  }

  // Checks that the writer may still append: not closed, no append failed.
  Status check_usable() const {
    if (closed) return invalid_argument("the writer is closed");
    if (failed) return invalid_argument("an earlier append failed; the writer can only abort");
    return Status::ok();
  }

  // Checks that n more records after the first `after` can be addressed.
  static Status check_addressable(uint64_t after, size_t n) {
    if (n > (UINT64_MAX - format::kTableOffset) / format::kRecordLocSize - after)
      return invalid_argument("the store would hold more records than the format can address");
    return Status::ok();
  }

  // Checks that a window of n records may be appended at all.
  Status check_appendable(size_t n) const {
    ZREC_RETURN_IF_ERROR(check_usable());
    if (payload_end != length) return table_pending();
    return check_addressable(length + held.size(), n);
  }

  // The window engine shared by append() and append_encoded(): payload chunks on all
  // lanes, the payload barrier, then the window's RecordLocs in one positional write.
  // Any failure leaves the writer able only to abort.
  Status write_window(size_t n, const std::vector<Chunk>& chunks,
                      const std::function<Status(size_t lane, const Chunk& c)>& write_chunk) {
    dirty = true;
    Status s = pool->run(chunks.size(), [&](size_t lane, size_t i) { return write_chunk(lane, chunks[i]); });
    if (s.is_ok())
      s = files.meta.pwrite_all(locs.data(), n * format::kRecordLocSize, format::record_loc_offset(length));
    if (s.is_ok() && options.sync) s = start_early_writeback(format::record_loc_offset(length + n));
    if (!s.is_ok()) {
      failed = true;
      return s;
    }
    length += n;
    payload_end = length;
    return Status::ok();
  }

  // Performance: written bytes go to the disk while the next windows are prepared
  // (io/write_behind.h), so frame copy ends up near `cp -r; sync`.
  Status start_early_writeback(uint64_t table_end) {
    ZREC_RETURN_IF_ERROR(start_payload_writeback());
    return io::write_behind(files.meta, meta_writeback_from, table_end);
  }
  Status start_payload_writeback() {
    for (uint32_t sh = 0; sh < files.page.data_shards; ++sh)
      ZREC_RETURN_IF_ERROR(io::write_behind(files.data[sh], writeback_from[sh], tails[sh]));
    return Status::ok();
  }

  // The page write or its fsync failed, so the new page may or may not be on disk.
  // Every file already has the new sizes, which both the old and the new page accept
  // (the old table and payloads are prefixes of the new ones), so nothing is shortened
  // again: the page read back says which state the store opens as, and the message
  // says it. The writer can only abort afterwards.
  Status page_write_failed(const format::StaticPage& page, const format::PageBytes& bytes, const Status& cause) {
    failed = true;
    const uint64_t old_length = files.page.length;
    const std::string where = "; '" + files.path + "' ";
    format::PageBytes now{};
    const bool readable = files.meta.pread_exact(now.data(), now.size(), 0).is_ok();
    if (readable && now == bytes) {
      files.page = page;
      dirty = false;
      return Status(cause.code(), cause.message() + "; the new static page was written (" +
                                      std::to_string(page.length) +
                                      " records published) but is not confirmed durable: after a system crash '" +
                                      files.path + "' may hold the previous " + std::to_string(old_length));
    }
    if (readable && now == format::encode_static_page(files.page))
      return Status(cause.code(), cause.message() + where + "still holds its previous state: " +
                                      std::to_string(old_length) + " records (the new static page was not written)");
    keep_sizes = true;
    return Status(cause.code(), cause.message() + where + "holds either " + std::to_string(old_length) + " or " +
                                    std::to_string(page.length) +
                                    " records: its static page could not be read back (no file was shortened; "
                                    "verifying the store tells which)");
  }

  // One encoder per lane for the writer's codec (and dictionary).
  Status make_encoders() {
    encoders.clear();
    codec::EncoderOptions eo{codec, options.level, checksum, files.dictionary};
    for (size_t lane = 0; lane < pool->count(); ++lane) {
      ZREC_ASSIGN_OR_RETURN(auto enc, codec::Encoder::create(eo));
      encoders.push_back(std::move(enc));
    }
    return Status::ok();
  }

  // At open, under the lock: an empty store whose codec is pending gets it chosen by
  // this writer's first window. A dict.zr beside it is a killed first append's, made
  // before it could publish; it goes, so that the choice is made again from scratch
  // (the same records make the same one). zrec-codec-auto beside a store with records
  // is a first append's killed after it published: the choice stands, the file goes.
  Status take_pending_choice() {
    if (!files.codec_file) return Status::ok();
    const std::string name = files.codec_pending() ? kDictFile : kCodecAutoFile;
    const std::string path = join_path(files.path, name);
    if (io::retry_eintr([&] { return ::unlink(path.c_str()); }) != 0 && errno != ENOENT)
      return io::errno_status(errno, "cannot remove", path);
    if (files.codec_pending()) {
      choose = true;
      return Status::ok();
    }
    files.codec_file = false;
    return io::sync_directory(files.path);
  }

  // A pending store's first appends (docs/format.md §6): records are held until they
  // make a window (kAutoWindowBytes or kAutoWindowRecords, zrec/codec_choice.h), or
  // chosen from at once when the first call holds that much; the choice made, they are
  // written as any other.
  Status append_choosing(std::span<const RecordRef> records);
  // Chooses from the held records and writes them (publish() calls it too).
  Status write_held();
  // The choice (zrec/codec_choice.h) from `records`; frame checksums asked for keep the
  // store zstd rather than raw. A failure leaves the writer able only to abort.
  Status choose_codec_from(std::span<const RecordRef> records);
  // append() once the codec is known: the window engine on `records`.
  Status append_now(std::span<const RecordRef> records);

  // Before the first publication of a store whose codec was pending: dict.zr, synced
  // with its directory entry, so that the page naming zstd_dict never comes before it.
  Status write_chosen_dictionary() {
    if (codec != Codec::kZstdDict || dict_written) return Status::ok();
    const std::vector<uint8_t>& bytes = files.dictionary->bytes();
    ZREC_ASSIGN_OR_RETURN(
        io::File f, io::File::open(join_path(files.path, kDictFile), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644));
    dict_written = true;
    ZREC_RETURN_IF_ERROR(f.pwrite_all(bytes.data(), bytes.size(), 0));
    ZREC_RETURN_IF_ERROR(f.sync());
    return io::sync_directory(files.path);
  }

  // After it: the choice is in the page, so zrec-codec-auto goes, best effort: one left
  // beside a store with records (a kill, a failed unlink) is ignored by readers and
  // removed by the next writer, so it fails no publication.
  void drop_codec_file() {
    const std::string path = join_path(files.path, kCodecAutoFile);
    (void)io::retry_eintr([&] { return ::unlink(path.c_str()); });
    if (options.sync) (void)io::sync_directory(files.path);
    files.codec_file = false;
    dict_written = false;
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
        format::put_shape_prefix(stage.data(), r.dims, prefix);
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

Result<std::unique_ptr<StoreWriter>> StoreWriter::open(const std::string& path, const WriterOptions& options,
                                                       const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(auto files, store::load_store_files(path, io::LockMode::kExclusive, ctx));
  // Under the store's lock: a root's writer that lists the store (adopt) holds it too,
  // so the marker read here is the one that stands while this writer does.
  if (!options.through_root) ZREC_RETURN_IF_ERROR(refuse_root_stream(path));
  auto impl = std::make_unique<Impl>(std::move(files), options, ctx.lanes);
  ZREC_RETURN_IF_ERROR(impl->take_pending_choice());
  const store::ChecksumSetting setting = store::read_checksum_setting(impl->files);
  impl->checksum = impl->files.page.codec != Codec::kRaw && options.checksum.value_or(setting.checksum);
  impl->checksum_marker = setting.marker;
  for (size_t lane = 0; lane < impl->pool->count(); ++lane) {
    impl->scratch.emplace_back();
    impl->staging.emplace_back();
    impl->iovs.emplace_back();
  }
  ZREC_RETURN_IF_ERROR(impl->make_encoders());
  return std::unique_ptr<StoreWriter>(new StoreWriter(std::move(impl)));
}

const Schema& StoreWriter::schema() const { return impl_->files.schema; }
Codec StoreWriter::codec() const { return impl_->codec; }
const CodecChoice* StoreWriter::codec_choice() const { return impl_->choice ? &*impl_->choice : nullptr; }
uint32_t StoreWriter::data_shards() const { return impl_->files.page.data_shards; }
const std::shared_ptr<Lanes>& StoreWriter::lanes() const { return impl_->pool; }
uint64_t StoreWriter::length() const { return impl_->length + impl_->held.size(); }
uint64_t StoreWriter::published_length() const { return impl_->files.page.length; }
uint64_t StoreWriter::stored_bytes() const {
  uint64_t sum = 0;
  for (uint32_t s = 0; s < impl_->files.page.data_shards; ++s) sum += impl_->tails[s];
  return sum;
}
bool StoreWriter::checksum() const { return impl_->checksum; }
const std::vector<uint8_t>& StoreWriter::dictionary() const {
  static const std::vector<uint8_t> kNone;
  return impl_->files.dictionary ? impl_->files.dictionary->bytes() : kNone;
}

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
    if (schema.ndim == 1) {  // the common case, without the general volume's loop
      if (r.dims[0] == 0) return bad("has a zero-length dimension (records must be nonempty)");
      if (r.dims[0] > UINT64_MAX / schema.dtype.itemsize || r.dims[0] * schema.dtype.itemsize != r.size)
        return bad("has a payload size that does not match its shape");
      if (schema.shape_prefix_bytes() + r.size > format::kMaxRecordBytes)
        return bad("is 2 GiB or larger (the format's limit per record)");
      continue;
    }
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
  ZREC_RETURN_IF_ERROR(m.check_appendable(records.size()));
  ZREC_RETURN_IF_ERROR(check(records));
  if (records.empty()) return Status::ok();
  if (m.choose) return m.append_choosing(records);
  return m.append_now(records);
}

Status StoreWriter::Impl::append_choosing(std::span<const RecordRef> records) {
  uint64_t bytes = 0;
  for (const RecordRef& r : records) bytes += logic_length(r);
  if (held.empty() && (records.size() >= kAutoWindowRecords || bytes >= kAutoWindowBytes)) {
    ZREC_RETURN_IF_ERROR(choose_codec_from(records));
    return append_now(records);
  }
  const uint32_t ndim = files.schema.is_dense() ? 0 : files.schema.ndim;
  for (const RecordRef& r : records) {
    Held h;
    h.bytes.assign(r.data, r.data + r.size);
    if (ndim > 0) h.dims.assign(r.dims, r.dims + ndim);
    held.push_back(std::move(h));
  }
  held_bytes += bytes;
  if (held.size() >= kAutoWindowRecords || held_bytes >= kAutoWindowBytes) return write_held();
  return Status::ok();
}

Status StoreWriter::Impl::write_held() {
  if (held.empty()) return Status::ok();
  std::vector<RecordRef> refs;
  refs.reserve(held.size());
  for (const Held& h : held) refs.push_back({h.bytes.data(), h.bytes.size(), h.dims.empty() ? nullptr : h.dims.data()});
  Status s = choose_codec_from(refs);
  if (s.is_ok()) s = append_now(refs);
  held.clear();
  held_bytes = 0;
  return s;
}

Status StoreWriter::Impl::choose_codec_from(std::span<const RecordRef> records) {
  choose = false;
  Status s = [&]() -> Status {
    auto source = window_record_source(files.schema, records);
    ZREC_ASSIGN_OR_RETURN(CodecChoice c, zrec::choose_codec(*source, Context{.lanes = pool}));
    if (checksum && c.codec == Codec::kRaw) c.codec = Codec::kZstd;
    codec = c.codec;
    if (codec == Codec::kRaw) checksum = false;
    if (codec == Codec::kZstdDict) {
      ZREC_ASSIGN_OR_RETURN(files.dictionary, codec::Dictionary::load(c.dictionary));
    }
    choice = std::move(c);
    return make_encoders();
  }();
  if (!s.is_ok()) failed = true;
  return s;
}

Status StoreWriter::Impl::append_now(std::span<const RecordRef> records) {
  Impl& m = *this;
  m.locs.resize(records.size());
  const auto chunks = m.split(m.length, records.size(), [&](size_t k) { return m.logic_length(records[k]); });
  const bool raw = m.codec == Codec::kRaw;
  return m.write_window(records.size(), chunks, [&](size_t lane, const Chunk& c) {
    return raw ? m.write_raw_chunk(lane, records, c) : m.write_encoded_chunk(lane, records, c);
  });
}

Status StoreWriter::append_packed(PackedRecords& records) {
  ZREC_RETURN_IF_ERROR(write_packed_payload(records));
  return write_packed_table(records);
}

Status StoreWriter::write_packed_payload(PackedRecords& records) {
  Impl& m = *impl_;
  const size_t n = records.size();
  ZREC_RETURN_IF_ERROR(m.check_usable());
  if (m.codec != Codec::kRaw || m.choose) return invalid_argument("packed records are appended to a raw store only");
  if (records.placed_) return invalid_argument("packed records were written already (pack them again)");
  if (records.first_id() != m.payload_end)
    return invalid_argument("records packed as IDs " + std::to_string(records.first_id()) + "... follow " +
                            std::to_string(m.payload_end) + " records, not " + std::to_string(records.first_id()));
  if (records.shard_at_.size() != m.files.page.data_shards + size_t{1})
    return invalid_argument("records were packed for another store (its data shard count differs)");
  ZREC_RETURN_IF_ERROR(m.check_addressable(m.payload_end, n));
  if (n == 0) return Status::ok();
  // One chunk per shard (no budget, as every record counts 0 bytes): one write each.
  const std::vector<Chunk> chunks = m.split(m.payload_end, n, [](size_t) { return uint64_t{0}; });
  m.dirty = true;
  Status s = m.pool->run(chunks.size(), [&](size_t, size_t i) { return m.write_packed_chunk(records, chunks[i]); });
  if (s.is_ok() && m.options.sync) s = m.start_payload_writeback();
  if (!s.is_ok()) {
    m.failed = true;
    return s;
  }
  records.placed_ = true;
  m.payload_end += n;
  return Status::ok();
}

Status StoreWriter::write_packed_table(const PackedRecords& records) {
  Impl& m = *impl_;
  const size_t n = records.size();
  ZREC_RETURN_IF_ERROR(m.check_usable());
  if (n == 0) return Status::ok();
  if (records.first_id() != m.length || !records.placed_ || m.payload_end < m.length + n)
    return invalid_argument("the RecordLocs of records packed as IDs " + std::to_string(records.first_id()) +
                            "... are written after their payload and those of the " + std::to_string(m.length) +
                            " records before");
  m.dirty = true;
  const uint64_t at = format::record_loc_offset(m.length);
  Status s = m.files.meta.pwrite_all(records.locs_.data(), n * format::kRecordLocSize, at);
  if (s.is_ok() && m.options.sync)
    s = io::write_behind(m.files.meta, m.meta_writeback_from, format::record_loc_offset(m.length + n));
  if (!s.is_ok()) {
    m.failed = true;
    return s;
  }
  m.length += n;
  return Status::ok();
}

Status StoreWriter::append_encoded(std::span<const EncodedRecord> records) {
  Impl& m = *impl_;
  ZREC_RETURN_IF_ERROR(m.check_appendable(records.size()));
  const Schema& schema = m.files.schema;
  const Codec codec = m.codec;
  for (size_t k = 0; k < records.size(); ++k) {
    const EncodedRecord& r = records[k];
    auto bad = [&](const std::string& rule) {
      return invalid_argument("stored record " + std::to_string(k) + " of this batch " + rule);
    };
    if ((r.data == nullptr && r.src_fd < 0) || r.phys_length < 1 || r.logic_length < 1) return bad("is empty");
    if (r.phys_length > format::kMaxRecordBytes || r.logic_length > format::kMaxRecordBytes)
      return bad("is 2 GiB or larger (the format's limit per record)");
    if (codec == Codec::kRaw && r.phys_length != r.logic_length)
      return bad("has phys_length " + std::to_string(r.phys_length) + " != logic_length " +
                 std::to_string(r.logic_length) + " in a raw store");
    if (schema.is_dense() && r.logic_length != m.files.dense_width)
      return bad("has logic_length " + std::to_string(r.logic_length) + "; a record of " + schema.describe() + " has " +
                 std::to_string(m.files.dense_width));
    if (!schema.is_dense() && r.logic_length < schema.shape_prefix_bytes() + schema.dtype.itemsize)
      return bad("has logic_length " + std::to_string(r.logic_length) + ", too short for " +
                 std::to_string(schema.ndim) + " dims and one element");
  }
  if (records.empty()) return Status::ok();
  if (!m.held.empty()) {
    ZREC_RETURN_IF_ERROR(m.write_held());
    if (m.codec != codec) {
      m.failed = true;
      return invalid_argument(std::string("stored frames in ") + to_string(codec) +
                              " follow records whose codec auto chose " + to_string(m.codec));
    }
  }
  m.choose = false;  // stored frames keep the codec they are in: the store's, zstd

  m.locs.resize(records.size());
  const auto chunks = m.split(m.length, records.size(), [&](size_t k) { return uint64_t{records[k].phys_length}; });
  return m.write_window(records.size(), chunks, [&](size_t lane, const Chunk& c) {
    if (records[c.first].src_fd >= 0 && m.copy_kernel_side(records, c)) return m.write_copied_chunk(records, c);
    return m.write_verbatim_chunk(lane, c, [&](size_t k, std::vector<iovec>& iov) {
      const EncodedRecord& r = records[k];
      iov.push_back({const_cast<uint8_t*>(r.data), r.phys_length});
      return RecordLoc{0, r.phys_length, r.logic_length};
    });
  });
}

Status StoreWriter::publish() {
  Impl& m = *impl_;
  if (m.closed) return invalid_argument("the writer is closed");
  if (m.failed) return invalid_argument("an earlier append failed; nothing can be published");
  if (m.payload_end != m.length) return m.table_pending();
  ZREC_RETURN_IF_ERROR(m.write_held());  // a pending store's records held for its choice
  format::StaticPage page = m.files.page;
  page.length = m.length;
  page.tails = m.tails;
  page.codec = m.codec;
  if (page == m.files.page) return Status::ok();  // nothing new to publish
  const bool first_choice = m.files.codec_pending() && m.length > 0;
  if (first_choice) ZREC_RETURN_IF_ERROR(m.write_chosen_dictionary());
  for (uint32_t s = 0; s < m.files.page.data_shards; ++s) {
    ZREC_RETURN_IF_ERROR(m.files.data[s].truncate(m.tails[s]));
    if (m.options.sync) ZREC_RETURN_IF_ERROR(m.files.data[s].sync());
  }
  ZREC_RETURN_IF_ERROR(m.files.meta.truncate(format::record_loc_offset(m.length)));
  if (m.options.sync) ZREC_RETURN_IF_ERROR(m.files.meta.sync());
  // The publication: one 4096-byte positional write of the static page. From here on
  // the new page may be on disk, so no file may shrink below what it references.
  const auto bytes = format::encode_static_page(page);
  Status s = m.files.meta.pwrite_all(bytes.data(), bytes.size(), 0);
  if (s.is_ok() && m.options.sync) s = m.files.meta.sync();
  if (!s.is_ok()) return m.page_write_failed(page, bytes, s);
  m.files.page = page;
  m.dirty = false;
  if (first_choice) m.drop_codec_file();
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

Status StoreWriter::cut_back(uint64_t length) {
  Impl& m = *impl_;
  ZREC_RETURN_IF_ERROR(m.check_usable());
  if (m.length != m.files.page.length || m.payload_end != m.length)
    return invalid_argument("cannot cut back a store with unpublished records");
  Status s = store::cut_back_files(m.files, length);
  if (!s.is_ok()) {
    // The page may be the cut one already: abort() puts the files at its sizes.
    m.failed = true;
    m.dirty = true;
    return s;
  }
  m.tails = m.files.page.tails;
  m.length = m.files.page.length;
  m.payload_end = m.length;
  m.writeback_from = m.tails;
  m.meta_writeback_from = format::record_loc_offset(m.length);
  m.checksum_marker = store::read_checksum_setting(m.files).marker;
  return Status::ok();
}

void StoreWriter::abort() {
  Impl& m = *impl_;
  if (m.closed) return;
  // Best effort: put every file back to its published size, so the store is exactly as
  // it was (a crash would leave ignorable leftovers instead).
  if (m.dirty && !m.keep_sizes) {
    for (uint32_t s = 0; s < m.files.page.data_shards && s < m.files.data.size(); ++s)
      (void)m.files.data[s].truncate(m.files.page.tails[s]);
    (void)m.files.meta.truncate(format::record_loc_offset(m.files.page.length));
    // An empty store keeps its checksum setting in the slot an append overwrote.
    if (m.files.page.length == 0 && m.checksum_marker) (void)store::write_checksum_marker(m.files.meta);
    // A dictionary chosen for a first window that is not published goes with it.
    if (m.dict_written && m.files.page.length == 0) {
      const std::string dict = join_path(m.files.path, kDictFile);
      (void)io::retry_eintr([&] { return ::unlink(dict.c_str()); });
    }
  }
  m.files.meta.close();
  m.files.data.clear();
  m.closed = true;
}

}  // namespace zrec
