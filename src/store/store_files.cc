// Loading and checking a store's files.
#include "store/store_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <optional>

#include "zrec/lanes.h"

#include "format/endian.h"
#include "format/layout.h"
#include "format/record_loc.h"
#include "format/schema_msgpack.h"
#include "io/location.h"

namespace zrec::store {

Status malformed_store(const std::string& path, const std::string& what) {
  return malformed("malformed store '" + path + "': " + what);
}

namespace {

// Opens a file that belongs to the store, refusing symlinks with a clear message.
Result<io::File> open_store_file(const std::string& store, const std::string& name, int flags) {
  const std::string path = join_path(store, name);
  auto file = io::File::open(path, flags | O_NOFOLLOW | O_NONBLOCK);
  if (!file.is_ok() && errno == ELOOP)
    return invalid_argument("store '" + store + "': " + name +
                            " is a symbolic link; zrec only opens regular files inside a store");
  if (!file.is_ok()) return file;
  // O_NONBLOCK above keeps a FIFO planted in a store from blocking open(); anything but
  // a regular file (FIFO, device, directory, socket) is refused, then the flag is dropped.
  struct stat st;
  if (::fstat(file->fd(), &st) != 0) return io::errno_status(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) return malformed_store(store, name + " is not a regular file");
  // A hard link makes the same bytes a file outside the store too, which an append
  // would extend and an abort truncate; writers refuse it (readers change nothing).
  if ((flags & O_ACCMODE) != O_RDONLY && st.st_nlink > 1)
    return invalid_argument("store '" + store + "': " + name + " has " + std::to_string(st.st_nlink) +
                            " hard links; zrec only writes store files that have exactly one (a concat --consume "
                            "killed midway leaves such links in its hidden temporary '.DST.zrec-tmp-*' until "
                            "it is rerun)");
  const int fl = ::fcntl(file->fd(), F_GETFL);
  if (fl < 0 || ::fcntl(file->fd(), F_SETFL, fl & ~O_NONBLOCK) != 0)
    return io::errno_status(errno, "cannot open", path);
  return file;
}

Result<std::vector<uint8_t>> read_whole(const io::Readable& f) {
  ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
  // dict.zr is loaded whole; cap it so a hostile file can't make us allocate wildly.
  if (size > (uint64_t{1} << 30)) return malformed("dict.zr is larger than 1 GiB");
  std::vector<uint8_t> bytes(size);
  ZREC_RETURN_IF_ERROR(f.pread_exact(bytes.data(), bytes.size(), 0));
  return bytes;
}

// Reads the static page; for a store a writer holds, until two consecutive reads agree
// (a pread racing the writer's pwrite of the page could see a mix of two states).
Status read_page(StoreFiles& s, format::PageBytes& page_bytes) {
  ZREC_RETURN_IF_ERROR(s.meta_file().pread_exact(page_bytes.data(), page_bytes.size(), 0));
  if (!s.writer_active) return Status::ok();
  constexpr int kTries = 20;
  format::PageBytes again;
  for (int attempt = 0; attempt < kTries; ++attempt) {
    ZREC_RETURN_IF_ERROR(s.meta_file().pread_exact(again.data(), again.size(), 0));
    if (again == page_bytes) return Status::ok();
    page_bytes = again;
    ::usleep(5000);
    ZREC_RETURN_IF_ERROR(s.meta_file().pread_exact(page_bytes.data(), page_bytes.size(), 0));
  }
  return Status(StatusCode::kBusy, "store '" + s.path + "' is being written and its static page kept changing (" +
                                       std::to_string(kTries) + " tries); try again");
}

Result<StoreFiles> check_store_files(StoreFiles s, io::LockMode mode);

// The files of a store given by URL (zrec/remote.h): fetched by ranges, never locked (a
// web server has no locks; each file's pinned validator stands in for the lock: a
// store republished while it is read fails the next read instead of mixing versions).
// Returns StoreFiles whose files are remote_files.
Result<StoreFiles> load_remote_files(const std::string& url, const Context& ctx) {
  StoreFiles s;
  s.path = redact_url(url);
  s.url = url;
  s.opened_with.remote = ctx.remote;
  s.opened_with.control.cancel = ctx.control.cancel;
  // The static page and the first 256 RecordLocs, the first request of every command.
  constexpr uint64_t kMetaPrefetch = format::kPageSize + 256 * format::kRecordLocSize;
  const auto started = std::chrono::steady_clock::now();
  auto meta = io::Location(url).child(format::kMetaFile).open_for_reading(kMetaPrefetch, ctx);
  s.open_micros = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started).count());
  if (!meta.is_ok() && meta.status().code() == StatusCode::kNotFound)
    return not_found("'" + s.path + "' is not a zrecord store (no meta.zr: " + meta.status().message() + ")");
  if (!meta.is_ok()) return meta.status();
  s.remote_files.push_back(std::move(meta).value());
  return s;
}

}  // namespace

Result<StoreFiles> load_store_files(const std::string& path, io::LockMode mode, const Context& ctx) {
  const io::Location at(path);
  if (at.remote() && mode != io::LockMode::kShared) return at.local_path("stores").status();
  if (at.remote()) {
    ZREC_ASSIGN_OR_RETURN(auto s, load_remote_files(path, ctx));
    return check_store_files(std::move(s), io::LockMode::kShared);
  }
  StoreFiles s;
  s.path = path;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return io::errno_status(errno, "cannot open store", path);
  if (!S_ISDIR(st.st_mode)) return invalid_argument("'" + path + "' is not a store (not a directory)");

  const int flags = mode == io::LockMode::kExclusive ? O_RDWR : O_RDONLY;
  auto meta = open_store_file(path, format::kMetaFile, flags);
  if (!meta.is_ok()) {
    if (meta.status().code() == StatusCode::kNotFound)
      return not_found("'" + path + "' is not a zrecord store (no meta.zr)");
    return meta.status();
  }
  s.meta = std::move(meta).value();
  Status locked = io::lock_store(s.meta, mode, ctx.wait, ctx.control.cancel, path);
  if (!locked.is_ok()) {
    if (!(ctx.snapshot_if_busy && locked.code() == StatusCode::kBusy && mode == io::LockMode::kShared)) return locked;
    s.writer_active = true;
  }
  return check_store_files(std::move(s), mode);
}

namespace {

// The most data files of a remote store opened at once.
constexpr size_t kRemoteOpeners = 16;

// Opens a store file of `s` for reading; a remote one fetches `prefetch` bytes first.
Result<std::unique_ptr<const io::Readable>> open_member(const StoreFiles& s, const std::string& name,
                                                        uint64_t prefetch) {
  if (s.is_remote()) return io::Location(s.url).child(name).open_for_reading(prefetch, s.opened_with);
  ZREC_ASSIGN_OR_RETURN(io::File f, open_store_file(s.path, name, O_RDONLY));
  return std::unique_ptr<const io::Readable>(new io::File(std::move(f)));
}

// The checks of load_store_files once meta.zr is open (and locked): the page, the
// schema, the table's size, the data files and the dictionary.
Result<StoreFiles> check_store_files(StoreFiles s, io::LockMode mode) {
  const std::string& path = s.path;
  const int flags = mode == io::LockMode::kExclusive ? O_RDWR : O_RDONLY;
  ZREC_ASSIGN_OR_RETURN(uint64_t meta_size, s.meta_file().size());
  if (meta_size < format::kPageSize)
    return malformed_store(
        path, "meta.zr is " + std::to_string(meta_size) + " bytes, shorter than the 4096-byte static page");
  format::PageBytes page_bytes;
  ZREC_RETURN_IF_ERROR(read_page(s, page_bytes));
  auto page = format::decode_static_page(page_bytes);
  if (!page.is_ok()) return malformed_store(path, "meta.zr: " + page.status().message());
  s.page = std::move(page).value();

  auto schema = format::decode_schema(s.page.schema);
  if (!schema.is_ok()) return malformed_store(path, "meta.zr: " + schema.status().message());
  s.schema = std::move(schema).value();
  if (s.schema.is_dense()) s.dense_width = s.schema.dense_width();

  const uint64_t table_end = format::record_loc_offset(s.page.length);  // overflow checked by decode
  if (meta_size < table_end)
    return malformed_store(path, "meta.zr is " + std::to_string(meta_size) + " bytes but " +
                                     std::to_string(s.page.length) + " records need " + std::to_string(table_end));

  // A remote store's data files are opened all at once: each open is a request (a round
  // trip), and a link of 25 ms made the 4 opens of a default store a tenth of a second
  // before the first record could be asked for.
  std::vector<std::optional<Result<std::unique_ptr<const io::Readable>>>> opened(s.page.data_shards);
  if (s.is_remote() && s.page.data_shards > 1) {
    Lanes openers(std::min<size_t>(s.page.data_shards, kRemoteOpeners));
    (void)openers.run(s.page.data_shards, [&](size_t, size_t shard) {
      opened[shard] = open_member(s, format::data_file_name(static_cast<uint32_t>(shard)), 64);
      return Status::ok();
    });
  }
  for (uint32_t shard = 0; shard < s.page.data_shards; ++shard) {
    const std::string name = format::data_file_name(shard);
    Status missing = Status::ok();
    if (s.is_remote()) {
      // Its first 64 bytes come with the open, record 0's frame header (read_checksum_setting).
      auto f = opened[shard] ? std::move(*opened[shard]) : open_member(s, name, 64);
      if (f.is_ok()) s.remote_files.push_back(std::move(f).value());
      missing = f.status();
    } else {
      auto f = open_store_file(path, name, flags);
      if (f.is_ok()) s.data.push_back(std::move(f).value());
      missing = f.status();
    }
    if (!missing.is_ok()) {
      if (missing.code() == StatusCode::kNotFound) return malformed_store(path, name + " is missing");
      return missing;
    }
    ZREC_ASSIGN_OR_RETURN(uint64_t size, s.data_file(shard).size());
    if (size < s.page.tails[shard])
      return malformed_store(path, name + " is " + std::to_string(size) + " bytes, shorter than its tail " +
                                       std::to_string(s.page.tails[shard]));
  }

  // A remote store's dict.zr is asked for only when the codec needs it (then it comes
  // whole with its first request; it is loaded whole, 1 GiB cap below): a bucket
  // answers 403, not 404, for a missing object to whoever may not list it, and a
  // request would be spent on every open.
  if (s.is_remote() && s.page.codec != Codec::kZstdDict) return s;
  if (!s.is_remote()) {
    struct stat st;
    s.codec_file = ::lstat(join_path(path, kCodecAutoFile).c_str(), &st) == 0 && S_ISREG(st.st_mode);
  }
  auto dict = open_member(s, format::kDictFile, uint64_t{1} << 30);
  const bool has_dict = dict.is_ok();
  if (!has_dict && dict.status().code() != StatusCode::kNotFound) return dict.status();
  if (s.page.codec == Codec::kZstdDict) {
    if (!has_dict) return malformed_store(path, "codec is zstd_dict but dict.zr is missing");
    ZREC_ASSIGN_OR_RETURN(auto bytes, read_whole(*dict.value()));
    auto d = codec::Dictionary::load(std::move(bytes));
    if (!d.is_ok()) return malformed_store(path, d.status().message());
    s.dictionary = std::move(d).value();
  } else if (has_dict && !s.codec_pending()) {
    // (A store whose codec is pending may hold the dict.zr of a first append killed just
    // before it published: docs/format.md §6. Its next writer removes it.)
    return malformed_store(path, std::string("dict.zr is present but the codec is ") + to_string(s.page.codec));
  }
  return s;
}

}  // namespace

ChecksumSetting read_checksum_setting(const StoreFiles& files) {
  ChecksumSetting out;
  if (files.page.codec == Codec::kRaw) return out;
  uint8_t slot[format::kRecordLocSize];
  if (!files.meta_file().pread_exact(slot, sizeof slot, format::kTableOffset).is_ok()) return out;
  if (files.page.length == 0) {
    out.marker = std::memcmp(slot, format::kChecksumMarker, sizeof slot) == 0;
    out.checksum = out.marker;
    return out;
  }
  const RecordLoc loc = format::decode_record_loc(slot);
  if (record_loc_rule(files, files.page.tails.data(), 0, loc)) return out;
  uint8_t header[18];  // ZSTD_FRAMEHEADERSIZE_MAX
  const size_t n = std::min<size_t>(sizeof header, loc.phys_length);
  if (!files.data_file(0).pread_exact(header, n, loc.offset).is_ok()) return out;
  out.checksum = codec::frame_has_checksum(header, n).value_or(false);
  return out;
}

Status write_checksum_marker(const io::File& meta) {
  return meta.pwrite_all(format::kChecksumMarker, format::kRecordLocSize, format::kTableOffset);
}

std::optional<BrokenRule> record_loc_rule(const StoreFiles& files, const uint64_t* tails, uint64_t id,
                                          const RecordLoc& loc) {
  const uint32_t shard = static_cast<uint32_t>(id % files.page.data_shards);
  if (loc.phys_length < 1) return BrokenRule{"phys_length", "has phys_length 0"};
  if (loc.logic_length < 1) return BrokenRule{"logic_length", "has logic_length 0"};
  if (loc.phys_length > format::kMaxRecordBytes || loc.logic_length > format::kMaxRecordBytes)
    return BrokenRule{"record_size", "is 2 GiB or larger"};
  if (loc.offset > tails[shard] || loc.phys_length > tails[shard] - loc.offset)
    return BrokenRule{"past_tail", "ends past tail " + std::to_string(tails[shard])};
  if (files.page.codec == Codec::kRaw && loc.phys_length != loc.logic_length)
    return BrokenRule{"raw_lengths", "is raw but its logic_length is " + std::to_string(loc.logic_length)};
  if (files.schema.is_dense()) {
    if (loc.logic_length != files.dense_width)
      return BrokenRule{"dense_width", "has logic_length " + std::to_string(loc.logic_length) +
                                           ", not the Dense width " + std::to_string(files.dense_width)};
  } else if (loc.logic_length < files.schema.shape_prefix_bytes() + files.schema.dtype.itemsize) {
    return BrokenRule{"ragged_length", "has logic_length " + std::to_string(loc.logic_length) + ", too short for " +
                                           std::to_string(files.schema.ndim) + " dims and one element"};
  }
  return std::nullopt;
}

Status check_record_loc(const StoreFiles& files, const uint64_t* tails, uint64_t id, const RecordLoc& loc) {
  auto broken = record_loc_rule(files, tails, id, loc);
  if (!broken) return Status::ok();
  const uint32_t shard = static_cast<uint32_t>(id % files.page.data_shards);
  return malformed_store(files.path, format::data_file_name(shard) + ": record " + std::to_string(id) + " (offset " +
                                         std::to_string(loc.offset) + ", " + std::to_string(loc.phys_length) +
                                         " bytes) " + broken->text);
}

std::optional<BrokenRule> ragged_prefix_rule(const StoreFiles& files, const uint8_t* record, uint64_t logic_length) {
  const uint32_t ndim = files.schema.ndim;
  uint64_t volume = files.schema.dtype.itemsize;
  for (uint32_t d = 0; d < ndim; ++d) {
    const uint64_t dim = format::load_le<uint64_t>(record + 8 * d);
    if (dim < 1 || volume > UINT64_MAX / dim) {
      volume = 0;
      break;
    }
    volume *= dim;
  }
  const uint64_t prefix = files.schema.shape_prefix_bytes();
  if (volume == 0 || logic_length < prefix || volume != logic_length - prefix)
    return BrokenRule{"shape_prefix",
                      "shape prefix does not match its " + std::to_string(logic_length) +
                          " bytes (dims must be >= 1 and 8*ndim + itemsize*prod(dims) == logic_length)"};
  return std::nullopt;
}

Status check_ragged_prefix(const StoreFiles& files, uint64_t id, const uint8_t* record, uint64_t logic_length) {
  auto broken = ragged_prefix_rule(files, record, logic_length);
  if (!broken) return Status::ok();
  return malformed_store(files.path, format::data_file_name(static_cast<uint32_t>(id % files.page.data_shards)) +
                                         ": record " + std::to_string(id) + ": " + broken->text);
}

}  // namespace zrec::store
