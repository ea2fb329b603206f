// Joining stores by placement (zrec/join.h): each part's data files land as runs at
// fixed offsets of DEST's, its table entries shifted at a fixed place of DEST's table;
// in one process (join_stores) or in steps that several processes run (plan, place,
// publish), with DEST built in a temporary sibling and renamed into place at the end.
#include "zrec/join.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <numeric>
#include <optional>

#include "zrec/context.h"
#include "zrec/dataset.h"

#include "format/record_loc.h"
#include "format/schema_msgpack.h"
#include "format/sha256.h"
#include "format/static_page.h"
#include "io/copy_range.h"
#include "io/store_lock.h"
#include "io/write_behind.h"
#include "store/join_plan_file.h"
#include "store/temp_files.h"
#include "store/temp_sibling.h"
#include "zrec_support/file.h"
#include "zrec_support/memory.h"

namespace zrec {
namespace {

// IDs whose RecordLocs are read, shifted and written at once: 1 MiB of table.
constexpr uint64_t kJoinIdChunk = 65536;
// Records checked per read_stored call, by stored bytes (as frame copy's window).
constexpr uint64_t kCheckWindow = uint64_t{8} << 20;
// A data file's run is copied in pieces of this many bytes once they are checked, while
// their pages are still in the page cache; a multiple of every file system block size,
// so pieces of a block-aligned run stay block-aligned for FICLONERANGE.
constexpr uint64_t kCopyPiece = uint64_t{8} << 20;
// The prefix of a placement marker: ".zrec-placed-K" in the join's temporary.
constexpr const char* kPlacedPrefix = ".zrec-placed-";

// meta.zr's size once published: the table, or for an empty store the page and, with
// checksums on, the marker in the RecordLoc[0] slot (docs/format.md §7).
uint64_t meta_size(uint64_t length, bool checksum) {
  if (length > 0) return format::record_loc_offset(length);
  return format::kPageSize + (checksum ? format::kRecordLocSize : 0);
}

format::StaticPage dest_page(const JoinLayout& layout, Codec codec, const std::string& schema, bool published) {
  format::StaticPage page;
  page.data_shards = layout.shards;
  page.codec = codec;
  page.schema = schema;
  if (published) {
    page.length = layout.length;
    std::copy(layout.tails.begin(), layout.tails.end(), page.tails.begin());
  }
  return page;
}

// DEST's files while it is built: meta.zr and the data files, open read-write.
struct DestFiles {
  std::string dir;
  io::File meta;
  std::vector<io::File> data;
  io::File dict;  // zstd_dict only
};

Result<io::File> create_file(const std::string& path) {
  return io::File::open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
}

// Creates DEST's files in `dir` at their final sizes: meta.zr holding an unpublished
// page (length 0), the data files (sparse until the parts are placed), dict.zr. With
// `link_from`, the data files start as hard links to that store's, where the file
// system allows; linked[s] says which.
Result<DestFiles> populate_dest(const std::string& dir, const JoinLayout& layout, Codec codec,
                                const std::string& schema, const std::vector<uint8_t>& dictionary, bool checksum,
                                const Store* link_from, std::vector<bool>& linked) {
  DestFiles dest;
  dest.dir = dir;
  ZREC_ASSIGN_OR_RETURN(dest.meta, create_file(join_path(dir, kMetaFile)));
  const auto page = format::encode_static_page(dest_page(layout, codec, schema, false));
  ZREC_RETURN_IF_ERROR(dest.meta.pwrite_all(page.data(), page.size(), 0));
  if (checksum && layout.length == 0)
    ZREC_RETURN_IF_ERROR(dest.meta.pwrite_all(format::kChecksumMarker, format::kRecordLocSize, format::kTableOffset));
  ZREC_RETURN_IF_ERROR(dest.meta.truncate(meta_size(layout.length, checksum)));
  linked.assign(layout.shards, false);
  for (uint32_t s = 0; s < layout.shards; ++s) {
    const std::string path = join_path(dir, data_file_name(s));
    if (link_from != nullptr) {
      // The very file the part has open (a shared lock keeps its writers out), or no link.
      const std::string from = join_path(link_from->path(), data_file_name(s));
      struct stat open_st, path_st;
      if (::fstat(link_from->data_fd(s), &open_st) == 0 && ::lstat(from.c_str(), &path_st) == 0 &&
          S_ISREG(path_st.st_mode) && open_st.st_dev == path_st.st_dev && open_st.st_ino == path_st.st_ino &&
          io::retry_eintr([&] { return ::link(from.c_str(), path.c_str()); }) == 0)
        linked[s] = true;
    }
    if (linked[s]) {
      ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_RDWR | O_NOFOLLOW));
      dest.data.push_back(std::move(f));
    } else {
      ZREC_ASSIGN_OR_RETURN(io::File f, create_file(path));
      dest.data.push_back(std::move(f));
    }
    // A linked file may be longer than the part's tail (leftovers): never shorter than
    // it afterwards, since DEST's tail of shard s starts with the whole of it.
    ZREC_RETURN_IF_ERROR(dest.data.back().truncate(layout.tails[s]));
  }
  if (codec == Codec::kZstdDict) {
    ZREC_ASSIGN_OR_RETURN(dest.dict, create_file(join_path(dir, kDictFile)));
    ZREC_RETURN_IF_ERROR(dest.dict.pwrite_all(dictionary.data(), dictionary.size(), 0));
  }
  return dest;
}

// Opens the data files of a join's temporary and checks their sizes against the plan.
Status open_dest_data(DestFiles& dest, const JoinLayout& layout) {
  for (uint32_t s = 0; s < layout.shards; ++s) {
    ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(join_path(dest.dir, data_file_name(s)), O_RDWR | O_NOFOLLOW));
    ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
    if (size != layout.tails[s])
      return malformed("'" + f.path() + "' has " + std::to_string(size) + " bytes; the join planned " +
                       std::to_string(layout.tails[s]) + " (has something else changed it?)");
    dest.data.push_back(std::move(f));
  }
  return Status::ok();
}

// What place_part() reads records into to check them, kept across parts: reserved once
// for a whole window and backed by huge pages where the kernel offers them, as frame
// copy's (store/transfer.cc). Grown window by window instead, it was reallocated,
// moved and its new pages faulted in for every part: 20% of a raw join's CPU time.
struct CheckBuffers {
  std::vector<uint8_t> bytes;
  std::vector<uint64_t> offsets;
  CheckBuffers() {
    bytes.reserve(kCheckWindow);
    advise_huge_pages(bytes.data(), bytes.capacity());
  }
};

// Places one part: its table entries, shifted; its records checked as frame copy checks
// them (Store::read_stored); each of its data files copied into its run, in pieces as
// the checks reach them. `linked`: DEST's data files that already are the part's (the
// first part's hard links), which need no copy.
Status place_part(Store& part, const JoinPartPlace& place, DestFiles& dest, const std::vector<bool>& linked,
                  const Context& ctx, CheckBuffers& check, JoinStats* stats) {
  const uint32_t shards = part.data_shards();
  const std::shared_ptr<Lanes>& lanes = ctx.lanes ? ctx.lanes : part.lanes();
  std::vector<uint64_t> copied(shards, 0), frontier(shards, 0);
  for (uint32_t s = 0; s < shards; ++s)
    if (!linked.empty() && linked[place.dest_shard(s, shards)]) copied[s] = part.tail(s);
  std::vector<io::CopyCounts> counts(lanes->count());
  // Where write-behind stands in DEST's data files (per part shard) and in its table.
  std::vector<uint64_t> behind(shards);
  for (uint32_t s = 0; s < shards; ++s) behind[s] = place.offset[s] + copied[s];
  uint64_t table_behind = format::record_loc_offset(place.base);

  // Copies [copied[s], up to) of every data file whose run has at least a piece ready
  // (all of it at the end), a piece per lane task.
  auto copy_ready = [&](bool final) -> Status {
    struct Piece {
      uint32_t shard;
      uint64_t from, n;
    };
    std::vector<Piece> pieces;
    for (uint32_t s = 0; s < shards; ++s) {
      const uint64_t end = final ? part.tail(s) : std::min(part.tail(s), frontier[s]);
      if (end <= copied[s] || (!final && end - copied[s] < kCopyPiece)) continue;
      const uint64_t upto = final ? end : copied[s] + (end - copied[s]) / kCopyPiece * kCopyPiece;
      for (uint64_t from = copied[s]; from < upto; from += kCopyPiece)
        pieces.push_back({s, from, std::min(kCopyPiece, upto - from)});
      copied[s] = upto;
    }
    ZREC_RETURN_IF_ERROR(lanes->run(pieces.size(), [&](size_t lane, size_t i) {
      const Piece& p = pieces[i];
      const uint32_t d = place.dest_shard(p.shard, shards);
      return io::clone_range(part.data_fd(p.shard), join_path(part.path(), data_file_name(p.shard)), p.from,
                             dest.data[d], place.offset[p.shard] + p.from, p.n, &counts[lane]);
    }));
    // The runs copied so far start going to the disk while the next ones are checked
    // and copied, so the fsync at the end finds little left (io/write_behind.h).
    for (uint32_t s = 0; s < shards; ++s)
      ZREC_RETURN_IF_ERROR(
          io::write_behind(dest.data[place.dest_shard(s, shards)], behind[s], place.offset[s] + copied[s]));
    return Status::ok();
  };

  std::vector<uint64_t> ids;
  std::vector<RecordLoc> locs;
  std::vector<uint8_t> table;
  JoinStats running = *stats;  // for progress()
  for (uint64_t first = 0; first < part.length(); first += kJoinIdChunk) {
    ZREC_RETURN_IF_ERROR(ctx.control.check());
    const uint64_t count = std::min(kJoinIdChunk, part.length() - first);
    ids.resize(count);
    std::iota(ids.begin(), ids.end(), first);
    locs.resize(count);
    ZREC_RETURN_IF_ERROR(part.read_locs(first, count, locs.data()));  // checks every location
    table.resize(count * format::kRecordLocSize);
    for (uint64_t k = 0; k < count; ++k) {
      running.logical_bytes += locs[k].logic_length;
      RecordLoc shifted = locs[k];
      shifted.offset += place.offset[(first + k) % shards];
      format::encode_record_loc(shifted, &table[k * format::kRecordLocSize]);
    }
    ZREC_RETURN_IF_ERROR(
        dest.meta.pwrite_all(table.data(), table.size(), format::record_loc_offset(place.base + first)));
    ZREC_RETURN_IF_ERROR(
        io::write_behind(dest.meta, table_behind, format::record_loc_offset(place.base + first + count)));
    for (uint64_t begin = 0; begin < count;) {
      ZREC_RETURN_IF_ERROR(ctx.control.check());
      uint64_t end = begin, window = 0;
      while (end < count && (end == begin || window + locs[end].phys_length <= kCheckWindow))
        window += locs[end++].phys_length;
      ZREC_RETURN_IF_ERROR(part.read_stored(std::span<const uint64_t>(ids).subspan(begin, end - begin),
                                            locs.data() + begin, check.bytes, check.offsets, /*read_bytes=*/false));
      for (uint64_t k = begin; k < end; ++k) {
        const uint32_t s = static_cast<uint32_t>((first + k) % shards);
        frontier[s] = std::max(frontier[s], locs[k].offset + locs[k].phys_length);
      }
      ZREC_RETURN_IF_ERROR(copy_ready(false));
      running.records += end - begin;
      running.stored_bytes += window;
      ctx.control.report({.records = running.records, .bytes = running.logical_bytes});
      // A window that grew for one oversized record gives the memory back.
      if (check.bytes.size() > 2 * kCheckWindow) check = CheckBuffers();
      begin = end;
    }
  }
  ZREC_RETURN_IF_ERROR(copy_ready(true));
  ++stats->parts;
  stats->records += part.length();
  stats->logical_bytes = running.logical_bytes;
  for (uint32_t s = 0; s < shards; ++s) {
    stats->stored_bytes += part.tail(s);
    if (!linked.empty() && linked[place.dest_shard(s, shards)]) stats->bytes_linked += part.tail(s);
  }
  for (const auto& c : counts) {
    stats->bytes_cloned += c.cloned;
    stats->bytes_buffered += c.buffered;
  }
  return Status::ok();
}

// Everything up to the page write: data files and table on disk, then the static page
// on disk. From the page write on, the temporary holds DEST complete.
Status seal_dest(DestFiles& dest, const format::StaticPage& page) {
  for (const io::File& f : dest.data) ZREC_RETURN_IF_ERROR(f.sync());
  if (dest.dict.is_open()) ZREC_RETURN_IF_ERROR(dest.dict.sync());
  ZREC_RETURN_IF_ERROR(dest.meta.sync());
  const auto bytes = format::encode_static_page(page);
  ZREC_RETURN_IF_ERROR(dest.meta.pwrite_all(bytes.data(), bytes.size(), 0));
  ZREC_RETURN_IF_ERROR(dest.meta.sync());
  return io::sync_directory(dest.dir);
}

// The first part's data files that DEST hard-linked (JoinOptions::link_first) grow past
// the part's tails as the other parts land in them. Unless keep() is called (DEST is in
// place), they are cut back to their sizes before the join, so that a failed join leaves
// the part as it was, byte for byte. (A kill leaves the growth: bytes past the tails,
// which no reader sees and the next append overwrites.)
class FirstPartSizes {
 public:
  FirstPartSizes(const Store* part, const std::vector<bool>& linked) : part_(part), linked_(linked) {
    if (part_ == nullptr) return;
    for (uint32_t s = 0; s < part_->data_shards(); ++s) {
      struct stat st;
      sizes_.push_back(::fstat(part_->data_fd(s), &st) == 0 ? static_cast<uint64_t>(st.st_size) : UINT64_MAX);
    }
  }
  ~FirstPartSizes() {
    if (part_ == nullptr) return;
    for (uint32_t s = 0; s < sizes_.size() && s < linked_.size(); ++s) {
      if (!linked_[s] || sizes_[s] == UINT64_MAX) continue;
      // The very file the part has open, grown by this join: cut back to its old size.
      auto f = io::File::open(join_path(part_->path(), data_file_name(s)), O_WRONLY | O_NOFOLLOW);
      struct stat open_st, path_st;
      if (f.is_ok() && ::fstat(part_->data_fd(s), &open_st) == 0 && ::fstat(f->fd(), &path_st) == 0 &&
          open_st.st_dev == path_st.st_dev && open_st.st_ino == path_st.st_ino)
        (void)f->truncate(sizes_[s]);
    }
  }
  void keep() { part_ = nullptr; }

 private:
  const Store* part_;
  const std::vector<bool>& linked_;
  std::vector<uint64_t> sizes_;
};

std::vector<JoinPartShape> shapes_of(const std::vector<Store*>& parts) {
  std::vector<JoinPartShape> shapes;
  for (const Store* p : parts) {
    JoinPartShape shape{p->length(), {}};
    for (uint32_t s = 0; s < p->data_shards(); ++s) shape.tails.push_back(p->tail(s));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

std::string absolute(const std::string& path) {
  const std::string p = store::strip_trailing_slashes(path);
  if (p.starts_with('/')) return p;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return p;
  return join_path(cwd, p);
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

Result<std::string> read_whole_file(const std::string& path, uint64_t max_bytes) {
  // O_NONBLOCK: a FIFO in the plan's place would wait for a writer; it is refused.
  ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
  struct stat st {};
  if (::fstat(f.fd(), &st) != 0) return io::errno_status(errno, "cannot stat", path);
  if (!S_ISREG(st.st_mode)) return invalid_argument("'" + path + "' is not a regular file");
  ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
  if (size > max_bytes)
    return malformed("'" + path + "' has " + std::to_string(size) + " bytes, more than a join plan can");
  std::string text(size, '\0');
  ZREC_RETURN_IF_ERROR(f.pread_exact(text.data(), text.size(), 0));
  return text;
}

// A plan file holds a few lines per part; this bounds what a step reads of one.
constexpr uint64_t kMaxPlanBytes = uint64_t{1} << 30;

// A join's temporary holds, in its marker, the join's id and the plan file that names
// it: "zrec-join ID N PLAN\n" (N: PLAN's byte count).
std::string marker_text(const std::string& id, const std::string& plan) {
  return "zrec-join " + id + " " + std::to_string(plan.size()) + " " + plan + "\n";
}
constexpr uint64_t kMaxJoinMarkerBytes = 1 << 16;

std::string random_id() {
  uint8_t bytes[16] = {};
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  std::string id;
  for (uint8_t b : bytes) id += "0123456789abcdef"[b >> 4], id += "0123456789abcdef"[b & 15];
  return id;
}

std::string dictionary_sha(const std::vector<uint8_t>& dictionary) {
  if (dictionary.empty()) return "";
  return format::to_hex(format::Sha256::hash(dictionary.data(), dictionary.size()));
}

// A loaded plan, with the layout its parts' shapes give.
struct LoadedPlan {
  std::string path;
  store::JoinPlanFile file;
  JoinLayout layout;
  format::StaticPage final_page() const { return dest_page(layout, file.codec, file.schema, true); }
};

Result<LoadedPlan> load_plan(const std::string& plan) {
  ZREC_ASSIGN_OR_RETURN(std::string text, read_whole_file(plan, kMaxPlanBytes));
  ZREC_ASSIGN_OR_RETURN(store::JoinPlanFile file, store::decode_join_plan(text, plan));
  std::vector<JoinPartShape> shapes;
  for (const auto& p : file.parts) shapes.push_back(p.shape);
  auto layout = join_layout(file.shards, shapes);
  if (!layout.is_ok()) return malformed("'" + plan + "' is not a usable join plan: " + layout.status().message());
  return LoadedPlan{plan, std::move(file), std::move(layout).value()};
}

// Whether `dest` holds exactly the static page the plan publishes (its publication).
bool holds_page(const std::string& dest, const format::StaticPage& page) {
  auto meta = io::File::open(join_path(dest, kMetaFile), O_RDONLY | O_NOFOLLOW);
  if (!meta.is_ok()) return false;
  format::PageBytes bytes{};
  return meta->pread_exact(bytes.data(), bytes.size(), 0).is_ok() && bytes == format::encode_static_page(page);
}

// The join's temporary, opened by a step: meta.zr locked (shared for a placement,
// exclusive to publish or discard), its marker checked against the plan.
struct OpenTemp {
  DestFiles dest;
  bool sealed = false;  // its page is the final one: publish got past the page write
  bool marked = false;  // the marker is still there
};

Result<OpenTemp> open_temp(const LoadedPlan& plan, io::LockMode mode, const Context& ctx) {
  OpenTemp t;
  t.dest.dir = plan.file.temp;
  ZREC_ASSIGN_OR_RETURN(t.dest.meta, io::File::open(join_path(plan.file.temp, kMetaFile), O_RDWR | O_NOFOLLOW));
  ZREC_RETURN_IF_ERROR(io::lock_store(t.dest.meta, mode, ctx.wait, ctx.control.cancel, plan.file.temp));
  format::PageBytes bytes{};
  ZREC_RETURN_IF_ERROR(t.dest.meta.pread_exact(bytes.data(), bytes.size(), 0));
  t.sealed = bytes == format::encode_static_page(plan.final_page());
  auto marker = read_whole_file(join_path(plan.file.temp, store::kTempMarker), kMaxJoinMarkerBytes);
  t.marked = marker.is_ok();
  if (t.marked && !marker->starts_with("zrec-join " + plan.file.id + " "))
    return malformed("'" + plan.file.temp + "' belongs to another join than the plan '" + plan.path + "'");
  if (!t.marked && !t.sealed)
    return malformed("'" + plan.file.temp + "' has no " + store::kTempMarker + " marker: it is not the join of '" +
                     plan.path + "'");
  if (plan.file.codec == Codec::kZstdDict) {
    ZREC_ASSIGN_OR_RETURN(t.dest.dict, io::File::open(join_path(plan.file.temp, kDictFile), O_RDONLY | O_NOFOLLOW));
  }
  return t;
}

std::string placed_marker(const LoadedPlan& plan, uint64_t k) {
  return join_path(plan.file.temp, kPlacedPrefix + std::to_string(k));
}

bool is_placed(const LoadedPlan& plan, uint64_t k) {
  auto text = read_whole_file(placed_marker(plan, k), 256);
  return text.is_ok() && *text == plan.file.id + "\n";
}

// "parts 1, 3 and 7" (at most 10 named).
std::string part_list(const std::vector<uint64_t>& ks) {
  std::string s = ks.size() == 1 ? "part " : "parts ";
  for (size_t i = 0; i < ks.size() && i < 10; ++i)
    s += (i == 0 ? "" : (i + 1 == ks.size() ? " and " : ", ")) + std::to_string(ks[i]);
  if (ks.size() > 10) s += " and " + std::to_string(ks.size() - 10) + " more";
  return s;
}

Status not_the_plan(const LoadedPlan& plan, const std::string& why) {
  return invalid_argument("part " + why + " (plan '" + plan.path + "')");
}

// The part as the plan saw it: same schema, codec, dictionary, shard count, length, tails.
Status check_part(const LoadedPlan& plan, uint64_t k, const Store& part) {
  const auto& want = plan.file.parts[k];
  const std::string who = std::to_string(k) + " '" + want.path + "' changed since the plan was made: ";
  if (format::encode_schema(part.schema()) != plan.file.schema)
    return not_the_plan(plan, who + "its schema is " + part.schema().describe());
  if (part.codec() != plan.file.codec) return not_the_plan(plan, who + "its codec is " + to_string(part.codec()));
  if (part.data_shards() != plan.file.shards)
    return not_the_plan(plan, who + "it has " + std::to_string(part.data_shards()) + " data files");
  if (dictionary_sha(part.dictionary()) != plan.file.dictionary)
    return not_the_plan(plan, who + "its dictionary differs");
  if (part.length() != want.shape.length)
    return not_the_plan(plan, who + "it holds " + std::to_string(part.length()) + " records, the plan " +
                                  std::to_string(want.shape.length));
  for (uint32_t s = 0; s < part.data_shards(); ++s)
    if (part.tail(s) != want.shape.tails[s])
      return not_the_plan(plan, who + data_file_name(s) + " ends at " + std::to_string(part.tail(s)) +
                                    ", the plan has " + std::to_string(want.shape.tails[s]));
  return Status::ok();
}

// Names a join's temporary may hold: the store's files, the marker, placement markers.
bool is_join_file(const std::string& name) {
  if (name == kMetaFile || name == kDictFile || name == store::kTempMarker) return true;
  if (name.starts_with(kPlacedPrefix)) {
    const std::string k = name.substr(std::strlen(kPlacedPrefix));
    return !k.empty() && k.size() <= 10 && k.find_first_not_of("0123456789") == std::string::npos;
  }
  for (uint32_t s = 0; s < format::kMaxShards; ++s)
    if (name == data_file_name(s)) return true;
  return false;
}

// The names in `dir` (without "." and ".."); kIoError if it cannot be listed.
Result<std::vector<std::string>> list_dir(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return io::errno_status(errno, "cannot list", dir);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    const std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  return names;
}

Status unlink_in(const std::string& dir, const std::string& name) {
  const std::string p = join_path(dir, name);
  if (io::retry_eintr([&] { return ::unlink(p.c_str()); }) != 0 && errno != ENOENT)
    return io::errno_status(errno, "cannot remove", p);
  return Status::ok();
}

// Whether the join temporary at `dir` is one a live plan still names: its marker names a
// plan file that exists, has the marker's id and names `dir`.
bool named_by_live_plan(const std::string& dir) {
  auto marker = read_whole_file(join_path(dir, store::kTempMarker), kMaxJoinMarkerBytes);
  if (!marker.is_ok()) return false;
  const std::string& m = *marker;
  // "zrec-join " + 32 hex + " " + N + " " + PLAN + "\n"
  constexpr size_t kIdStart = 10, kIdEnd = kIdStart + 32;
  if (!m.starts_with("zrec-join ") || m.size() < kIdEnd + 2 || m[kIdEnd] != ' ' || !m.ends_with("\n")) return false;
  const size_t space = m.find(' ', kIdEnd + 1);
  if (space == std::string::npos) return false;
  const std::string id = m.substr(kIdStart, 32);
  const std::string plan = m.substr(space + 1, m.size() - space - 2);
  if (m.substr(kIdEnd + 1, space - kIdEnd - 1) != std::to_string(plan.size())) return false;
  auto loaded = load_plan(plan);
  return loaded.is_ok() && loaded->file.id == id && loaded->file.temp == dir;
}

// Removes the join temporaries of `dest` that no plan names any more (a plan_join
// killed before its plan file was written, a plan file removed by hand), where they
// provably are zrec's, as create removes its own (store/temp_files.h): placement markers
// are the join's files too, and a temporary that a live plan names, or whose meta.zr a
// step holds locked, is in use.
void remove_abandoned_join_temps(const std::string& dest, const WarningSink& warn) {
  store::TempStoreRules rules;
  rules.extra_file = [](const std::string& name) { return is_join_file(name); };
  rules.in_use = [](const std::string& dir) {
    auto meta = io::File::open(join_path(dir, kMetaFile), O_RDONLY | O_NOFOLLOW);
    if (meta.is_ok() && io::retry_eintr([&] { return ::flock(meta->fd(), LOCK_EX | LOCK_NB); }) != 0) return true;
    return named_by_live_plan(dir);
  };
  store::remove_abandoned_temp_stores(store::parent_of(dest), store::temp_prefix(dest, store::TempKind::kJoin), warn,
                                      rules);
}

}  // namespace

Status join_stores(const std::vector<Store*>& parts, const std::string& user_path, bool checksum,
                   const JoinOptions& options, JoinStats* stats, const Context& ctx) {
  if (parts.empty()) return invalid_argument("a join needs at least one part");
  const std::string mismatch = placement_mismatch(std::vector<const Store*>(parts.begin(), parts.end()));
  if (!mismatch.empty()) return invalid_argument("cannot join by placement: " + mismatch);
  JoinStats local;
  if (stats == nullptr) stats = &local;
  const Store& first = *parts.front();
  ZREC_ASSIGN_OR_RETURN(JoinLayout layout, join_layout(first.data_shards(), shapes_of(parts)));
  const std::string schema = format::encode_schema(first.schema());

  ZREC_ASSIGN_OR_RETURN(const std::string path, store::absent_build_target(user_path));
  store::remove_abandoned_build_temps(path, ctx.warn);
  ZREC_ASSIGN_OR_RETURN(auto tmp, store::TempSibling::make(path, store::TempKind::kBuild));
  std::vector<bool> linked;
  FirstPartSizes restore(options.link_first ? &first : nullptr, linked);
  ZREC_ASSIGN_OR_RETURN(DestFiles dest, populate_dest(tmp->path(), layout, first.codec(), schema, first.dictionary(),
                                                      checksum, options.link_first ? &first : nullptr, linked));
  CheckBuffers check;
  for (size_t k = 0; k < parts.size(); ++k)
    ZREC_RETURN_IF_ERROR(
        place_part(*parts[k], layout.parts[k], dest, k == 0 ? linked : std::vector<bool>(), ctx, check, stats));
  ZREC_RETURN_IF_ERROR(ctx.control.check());
  ZREC_RETURN_IF_ERROR(seal_dest(dest, dest_page(layout, first.codec(), schema, true)));
  ZREC_RETURN_IF_ERROR(tmp->rename_to(path, user_path, /*no_replace=*/true));
  restore.keep();  // DEST is in place: its data files are these
  return store::sync_parent(path, user_path);
}

Result<JoinPlanInfo> read_join_plan(const std::string& plan) {
  ZREC_ASSIGN_OR_RETURN(LoadedPlan p, load_plan(plan));
  JoinPlanInfo info;
  info.plan = plan;
  info.dest = p.file.dest;
  info.temp = p.file.temp;
  for (const auto& part : p.file.parts) info.parts.push_back(part.path);
  if (exists(p.file.temp)) {
    for (uint64_t k = 0; k < p.file.parts.size(); ++k) info.placed.push_back(is_placed(p, k));
  } else {
    info.published = holds_page(p.file.dest, p.final_page());
    info.placed.assign(p.file.parts.size(), info.published);
  }
  info.layout = std::move(p.layout);
  return info;
}

Result<JoinPlanInfo> plan_join(const std::vector<std::string>& part_paths, const std::string& user_dst,
                               const std::string& plan, const JoinOptions& options, const Context& ctx) {
  if (part_paths.empty()) return invalid_argument("a join needs at least one part");
  Context parts_ctx = ctx;  // the parts are opened on one lane unless ctx gives lanes
  if (!parts_ctx.lanes) parts_ctx.lanes = std::make_shared<Lanes>(1);
  store::JoinPlanFile file;
  std::vector<uint8_t> dictionary;
  {
    std::vector<std::unique_ptr<Store>> stores;
    std::vector<const Store*> parts;
    for (const auto& path : part_paths) {
      ZREC_ASSIGN_OR_RETURN(auto s, Store::open(path, {}, parts_ctx));
      parts.push_back(s.get());
      stores.push_back(std::move(s));
    }
    const std::string mismatch = placement_mismatch(parts);
    if (!mismatch.empty()) return invalid_argument("cannot join by placement: " + mismatch);
    const Store& first = *parts.front();
    file.dest = absolute(user_dst);
    file.shards = first.data_shards();
    file.codec = first.codec();
    file.checksum = first.checksum();
    file.schema = format::encode_schema(first.schema());
    dictionary = first.dictionary();
    file.dictionary = dictionary_sha(dictionary);
    for (size_t k = 0; k < parts.size(); ++k) {
      store::JoinPlanFile::Part part{absolute(part_paths[k]), {parts[k]->length(), {}}};
      for (uint32_t s = 0; s < file.shards; ++s) part.shape.tails.push_back(parts[k]->tail(s));
      file.parts.push_back(std::move(part));
    }
  }
  const std::string plan_abs = absolute(plan);
  if (exists(plan)) {
    // A rerun (a requeued job): the same join is planned already.
    ZREC_ASSIGN_OR_RETURN(LoadedPlan old, load_plan(plan));
    store::JoinPlanFile same = file;
    same.id = old.file.id;
    same.temp = old.file.temp;
    if (!(same == old.file))
      return Status(StatusCode::kAlreadyExists, "'" + plan + "' exists and plans another join (of '" +
                                                    (old.file.parts.empty() ? "" : old.file.parts[0].path) +
                                                    "'... into '" + old.file.dest +
                                                    "'); discard it first (zrec concat --discard)");
    ZREC_ASSIGN_OR_RETURN(JoinPlanInfo info, read_join_plan(plan));
    if (!info.published && !exists(info.temp))
      return malformed("'" + plan + "' names the temporary '" + info.temp + "', which is gone, and '" + info.dest +
                       "' is not its publication; discard the plan and make it again");
    info.reused = true;
    return info;
  }
  if (exists(file.dest)) return store::already_exists(user_dst, true);
  ZREC_ASSIGN_OR_RETURN(JoinLayout layout, join_layout(file.shards, [&] {
                          std::vector<JoinPartShape> shapes;
                          for (const auto& p : file.parts) shapes.push_back(p.shape);
                          return shapes;
                        }()));
  file.id = random_id();
  remove_abandoned_join_temps(file.dest, ctx.warn);
  ZREC_ASSIGN_OR_RETURN(auto tmp, store::TempSibling::make(file.dest, store::TempKind::kJoin));
  file.temp = tmp->path();
  {
    ZREC_ASSIGN_OR_RETURN(io::File marker,
                          io::File::open(join_path(tmp->path(), store::kTempMarker), O_WRONLY | O_TRUNC | O_NOFOLLOW));
    const std::string text = marker_text(file.id, plan_abs);
    ZREC_RETURN_IF_ERROR(marker.pwrite_all(text.data(), text.size(), 0));
    ZREC_RETURN_IF_ERROR(marker.sync());
  }
  std::vector<bool> linked;
  ZREC_ASSIGN_OR_RETURN(DestFiles dest, populate_dest(tmp->path(), layout, file.codec, file.schema, dictionary,
                                                      file.checksum, nullptr, linked));
  for (const io::File& f : dest.data) ZREC_RETURN_IF_ERROR(f.sync());
  if (dest.dict.is_open()) ZREC_RETURN_IF_ERROR(dest.dict.sync());
  ZREC_RETURN_IF_ERROR(dest.meta.sync());
  ZREC_RETURN_IF_ERROR(io::sync_directory(tmp->path()));
  // No half-written plan is ever at that name; one that appeared meanwhile is kAlreadyExists.
  const Status written =
      store::write_file_whole(plan, encode_join_plan(file), store::kJoinPlanMagic, "zrec join plan", false, ctx.warn);
  // Once the plan is at its name (only its directory's fsync failed), it names the
  // temporary, which stays for the steps.
  bool named = written.is_ok();
  if (!named) {
    auto at_name = load_plan(plan);
    named = at_name.is_ok() && at_name->file.id == file.id;
  }
  if (named) tmp->keep();
  ZREC_RETURN_IF_ERROR(written);
  JoinPlanInfo info;
  info.plan = plan;
  info.dest = file.dest;
  info.temp = file.temp;
  for (const auto& p : file.parts) info.parts.push_back(p.path);
  info.layout = std::move(layout);
  info.placed.assign(file.parts.size(), false);
  return info;
}

Status place_join_part(const std::string& plan_path, uint64_t k, const JoinOptions& options, JoinStats* stats,
                       const Context& ctx) {
  JoinStats local;
  if (stats == nullptr) stats = &local;
  ZREC_ASSIGN_OR_RETURN(LoadedPlan plan, load_plan(plan_path));
  if (k >= plan.file.parts.size())
    return invalid_argument("there is no part " + std::to_string(k) + " in the plan '" + plan_path + "' of " +
                            std::to_string(plan.file.parts.size()) + " parts (0.." +
                            std::to_string(plan.file.parts.size() - 1) + ")");
  if (!exists(plan.file.temp)) {
    if (holds_page(plan.file.dest, plan.final_page())) return Status::ok();  // published: nothing to place
    return malformed("the temporary '" + plan.file.temp + "' of the plan '" + plan_path + "' is gone and '" +
                     plan.file.dest + "' is not its publication; discard the plan and make it again");
  }
  ZREC_ASSIGN_OR_RETURN(OpenTemp temp, open_temp(plan, io::LockMode::kShared, ctx));
  if (temp.sealed) return Status::ok();  // publish got past its page write: every part is placed
  ZREC_RETURN_IF_ERROR(open_dest_data(temp.dest, plan.layout));
  ZREC_ASSIGN_OR_RETURN(uint64_t meta_bytes, temp.dest.meta.size());
  if (meta_bytes != meta_size(plan.layout.length, plan.file.checksum))
    return malformed("'" + temp.dest.meta.path() + "' has " + std::to_string(meta_bytes) + " bytes; the join planned " +
                     std::to_string(meta_size(plan.layout.length, plan.file.checksum)));
  const auto& want = plan.file.parts[k];
  ZREC_ASSIGN_OR_RETURN(auto part, Store::open(want.path, {}, ctx));
  ZREC_RETURN_IF_ERROR(check_part(plan, k, *part));
  CheckBuffers check;
  ZREC_RETURN_IF_ERROR(place_part(*part, plan.layout.parts[k], temp.dest, {}, ctx, check, stats));
  // Durable before the marker says so.
  for (uint32_t s = 0; s < plan.file.shards; ++s)
    if (part->tail(s) > 0)
      ZREC_RETURN_IF_ERROR(temp.dest.data[plan.layout.parts[k].dest_shard(s, plan.file.shards)].sync());
  ZREC_RETURN_IF_ERROR(temp.dest.meta.sync());
  ZREC_ASSIGN_OR_RETURN(io::File marker,
                        io::File::open(placed_marker(plan, k), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0644));
  const std::string text = plan.file.id + "\n";
  ZREC_RETURN_IF_ERROR(marker.pwrite_all(text.data(), text.size(), 0));
  ZREC_RETURN_IF_ERROR(marker.sync());
  return io::sync_directory(plan.file.temp);
}

Status publish_join(const std::string& plan_path, const JoinOptions& options, const Context& ctx, bool* already) {
  if (already != nullptr) *already = false;
  ZREC_ASSIGN_OR_RETURN(LoadedPlan plan, load_plan(plan_path));
  const std::string& dest = plan.file.dest;
  if (!exists(plan.file.temp)) {
    if (holds_page(dest, plan.final_page())) {
      if (already != nullptr) *already = true;
      return Status::ok();
    }
    return malformed("the temporary '" + plan.file.temp + "' of the plan '" + plan_path + "' is gone and '" + dest +
                     "' is not its publication; discard the plan and make it again");
  }
  ZREC_ASSIGN_OR_RETURN(OpenTemp temp, open_temp(plan, io::LockMode::kExclusive, ctx));
  if (!temp.sealed) {
    std::vector<uint64_t> missing;
    for (uint64_t k = 0; k < plan.file.parts.size(); ++k)
      if (!is_placed(plan, k)) missing.push_back(k);
    if (!missing.empty())
      return invalid_argument(part_list(missing) + " of " + std::to_string(plan.file.parts.size()) +
                              " are not placed yet; place them first (zrec concat --place K '" + plan_path + "')");
    ZREC_RETURN_IF_ERROR(open_dest_data(temp.dest, plan.layout));
    ZREC_ASSIGN_OR_RETURN(uint64_t meta_bytes, temp.dest.meta.size());
    if (meta_bytes != meta_size(plan.layout.length, plan.file.checksum))
      return malformed("'" + temp.dest.meta.path() + "' has " + std::to_string(meta_bytes) +
                       " bytes; the join planned " + std::to_string(meta_size(plan.layout.length, plan.file.checksum)));
    ZREC_RETURN_IF_ERROR(seal_dest(temp.dest, plan.final_page()));
  }
  // Sealed: the markers have done their work. The store's directory holds nothing else.
  ZREC_ASSIGN_OR_RETURN(auto names, list_dir(plan.file.temp));
  for (const auto& name : names)
    if (name.starts_with(kPlacedPrefix)) ZREC_RETURN_IF_ERROR(unlink_in(plan.file.temp, name));
  ZREC_RETURN_IF_ERROR(unlink_in(plan.file.temp, store::kTempMarker));
  ZREC_RETURN_IF_ERROR(store::rename_no_replace(plan.file.temp, dest, dest));
  return store::sync_parent(dest, dest);
}

Status discard_join(const std::string& plan_path, const JoinOptions& options, const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(LoadedPlan plan, load_plan(plan_path));
  const std::string& dir = plan.file.temp;
  if (exists(dir)) {
    ZREC_ASSIGN_OR_RETURN(OpenTemp temp, open_temp(plan, io::LockMode::kExclusive, ctx));
    ZREC_ASSIGN_OR_RETURN(auto names, list_dir(dir));
    for (const auto& name : names)
      if (!is_join_file(name))
        return invalid_argument("'" + dir + "' holds '" + name +
                                "', which is not the join's; it is left in place, with the plan");
    for (const auto& name : names)
      if (name != kMetaFile) ZREC_RETURN_IF_ERROR(unlink_in(dir, name));
    ZREC_RETURN_IF_ERROR(unlink_in(dir, kMetaFile));  // last: it holds the lock
    temp.dest.meta.close();
    if (io::retry_eintr([&] { return ::rmdir(dir.c_str()); }) != 0)
      return io::errno_status(errno, "cannot remove", dir);
  }
  if (io::retry_eintr([&] { return ::unlink(plan_path.c_str()); }) != 0)
    return io::errno_status(errno, "cannot remove", plan_path);
  return io::sync_directory(store::parent_of(plan_path));
}

struct ConsumedStore::Impl {
  std::string path;  // as given
  io::File meta;     // holds the lock
  format::StaticPage page;
};

ConsumedStore::~ConsumedStore() = default;

Result<std::unique_ptr<ConsumedStore>> ConsumedStore::lock(const std::string& user_path, const Context& ctx) {
  std::unique_ptr<ConsumedStore> c(new ConsumedStore());
  c->impl_ = std::make_unique<Impl>();
  Impl& m = *c->impl_;
  m.path = user_path;
  const std::string path = store::strip_trailing_slashes(user_path);
  ZREC_ASSIGN_OR_RETURN(m.meta, io::File::open(join_path(path, kMetaFile), O_RDWR | O_NOFOLLOW));
  ZREC_RETURN_IF_ERROR(io::lock_store(m.meta, io::LockMode::kExclusive, ctx.wait, ctx.control.cancel, user_path));
  // Removing a root's stream would leave the root without it.
  ZREC_RETURN_IF_ERROR(refuse_root_stream(path));
  format::PageBytes bytes{};
  ZREC_RETURN_IF_ERROR(m.meta.pread_exact(bytes.data(), bytes.size(), 0));
  ZREC_ASSIGN_OR_RETURN(m.page, format::decode_static_page(bytes));
  return c;
}

Status ConsumedStore::remove() {
  Impl& m = *impl_;
  const std::string path = store::strip_trailing_slashes(m.path);
  ZREC_ASSIGN_OR_RETURN(auto names, list_dir(path));
  for (const auto& name : names) {
    bool ours = name == kMetaFile || name == kDictFile;
    for (uint32_t s = 0; s < m.page.data_shards && !ours; ++s) ours = name == data_file_name(s);
    if (!ours) return invalid_argument("'" + m.path + "' holds '" + name + "', which is not a store file; not removed");
  }
  // meta.zr first: from then on the directory is no longer a store.
  ZREC_RETURN_IF_ERROR(unlink_in(path, kMetaFile));
  for (const auto& name : names)
    if (name != kMetaFile) ZREC_RETURN_IF_ERROR(unlink_in(path, name));
  m.meta.close();
  if (io::retry_eintr([&] { return ::rmdir(path.c_str()); }) != 0)
    return io::errno_status(errno, "cannot remove", path);
  return io::sync_directory(store::parent_of(path));
}

Status remove_store(const std::string& path, const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(auto consumed, ConsumedStore::lock(path, ctx));
  return consumed->remove();
}

}  // namespace zrec
