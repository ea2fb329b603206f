// cat --format tar (see tar_export.h). Samples are read in chunks of IDs, each stream
// scanning the chunk in turn, so memory stays bounded by the chunk and the windows.
#include "cli/tar_export.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "zrec/dataset.h"
#include "zrec/remote.h"
#include "zrec/store.h"

#include "cli/formats/npy.h"
#include "cli/formats/path_name.h"
#include "cli/formats/printable.h"
#include "cli/formats/record_format.h"
#include "cli/formats/record_order.h"
#include "cli/formats/selection.h"
#include "cli/formats/shard_pattern.h"
#include "cli/options/usage_error.h"
#include "cli/os/libarchive_api.h"
#include "cli/os/output_guard.h"
#include "cli/os/side_file.h"
#include "cli/report/console.h"
#include "cli/report/progress.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

namespace {

// Without -f, a shard name of the pattern that exists already is refused before the
// first shard is written (a later one used to fail the export midway, earlier shards
// written). Any index counts, not only those this export will write: a shard left by a
// longer earlier export would be mixed into this one's set.
Status refuse_existing_shards(const ShardPattern& pattern, const std::string& text, bool force) {
  if (force) return Status::ok();
  const std::string dir = pattern.directory();
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return Status::ok();  // opening the first shard says why
  std::string found;
  while (dirent* e = ::readdir(d)) {
    const std::string path = dir == "." ? std::string(e->d_name) : dir + e->d_name;
    struct stat st;
    if (pattern.names(path) && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (found.empty() || path < found))
      found = path;
  }
  ::closedir(d);
  if (found.empty()) return Status::ok();
  return Status(StatusCode::kAlreadyExists,
                "-o '" + text + "': the shard '" + found + "' already exists; use -f/--force to overwrite the shards");
}

// Samples per chunk: each stream holds a chunk's records at once.
constexpr uint64_t kChunkSamples = 1024;
// --with-ids: the extension of each sample's ID member (webdataset decodes it as an int).
constexpr const char* kIdExtension = "id";

// A member name that tar would extract outside the directory it is extracted in: an
// absolute name, or one with a ".." component. GNU tar's rule: it strips or refuses
// such names unless --absolute-names.
std::string unsafe_member_name(const std::string& name) {
  if (name.starts_with('/')) return "it is absolute";
  for (size_t at = 0; at <= name.size();) {
    size_t slash = name.find('/', at);
    if (slash == std::string::npos) slash = name.size();
    if (name.compare(at, slash - at, "..") == 0) return "it has a '..' component";
    at = slash + 1;
  }
  return {};
}

// Lines of a keys file, unescaped (\\, \n, \r), as append-tar writes them.
Result<std::vector<std::string>> read_keys(const std::string& path) {
  ZREC_ASSIGN_OR_RETURN(SideInput side, SideInput::open(path, "--keys"));
  io::InputStream& in = side.stream();
  std::string text;
  std::vector<char> chunk(1 << 20);
  for (;;) {
    ZREC_ASSIGN_OR_RETURN(size_t got, in.read_some(chunk.data(), chunk.size()));
    if (got == 0) break;
    text.append(chunk.data(), got);
  }
  std::vector<std::string> keys;
  std::string key;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') {
      keys.push_back(std::move(key));
      key.clear();
    } else if (c == '\\' && i + 1 < text.size()) {
      const char n = text[++i];
      key += n == 'n' ? '\n' : n == 'r' ? '\r' : n;
    } else {
      key += c;
    }
  }
  return keys;
}

// The bytes a member takes in the tar: its header, a PAX header before it when the
// name does not fit ustar's 100 bytes or is not ASCII (libarchive puts such a name in a
// PAX "path" record), and its data padded to 512-byte blocks.
uint64_t tar_member_bytes(const std::string& name, uint64_t size) {
  const bool ascii = std::all_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  const uint64_t pax = name.size() > 100 || !ascii ? 1024 + (name.size() + 511) / 512 * 512 : 0;
  return pax + 512 + (size + 511) / 512 * 512;
}
// The two zero blocks that end a tar (libarchive writes no padding past them here).
constexpr uint64_t kTarEndBytes = 1024;

struct TarSink {
  Output* out = nullptr;
  Status status;
};

la_ssize_t write_cb(struct archive*, void* data, const void* buf, size_t n) {
  auto* sink = static_cast<TarSink*>(data);
  sink->status = sink->out->write(buf, n);
  return sink->status.is_ok() ? static_cast<la_ssize_t>(n) : -1;
}

// What a stream's members hold (tar_export.h): its records' bytes, their numbers as
// text, or .npy files of their arrays.
enum class MemberKind { kBytes, kText, kNpy };

// The members append-tar reads back into the same stream, or (--arrays text) the text
// every number stream was written as before arrays kept their shape.
MemberKind tar_member_kind(const Schema& schema, bool arrays_as_text) {
  const std::string dtype = schema.dtype.str();
  const bool one_axis = schema.is_dense() ? schema.ndim == 0 : schema.ndim == 1;
  if (arrays_as_text) return dtype == "|u1" ? MemberKind::kBytes : MemberKind::kText;
  if (dtype == "|u1" && !schema.is_dense() && schema.ndim == 1) return MemberKind::kBytes;
  // --parse makes '<i8' and '<f8' streams of these geometries, and reads their text.
  if ((dtype == "<i8" || dtype == "<f8") && one_axis) return MemberKind::kText;
  return MemberKind::kNpy;
}

struct ExportStream {
  std::string ext;
  std::string member_ext;  // ext, or "<ext>.npy" for arrays
  bool keys = false;       // the root's __key__ stream: the samples' keys, not members
  std::unique_ptr<Store> store;
  MemberKind kind = MemberKind::kBytes;
  std::vector<std::vector<uint8_t>> chunk;  // the chunk's members
};

Status member_bytes(const ExportStream& s, const uint8_t* record, uint64_t size, std::vector<uint8_t>& out) {
  const Schema& schema = s.store->schema();
  const uint64_t prefix = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
  const uint8_t* payload = record + prefix;
  const uint64_t n = size - prefix;
  if (s.kind == MemberKind::kBytes) {
    out.assign(payload, payload + n);
    return Status::ok();
  }
  if (s.kind == MemberKind::kNpy) {
    const std::vector<uint64_t> dims = schema.is_dense() ? *schema.item_shape : ragged_dims(schema, record);
    const std::string header = encode_npy_header(schema.dtype, dims);
    out.assign(header.begin(), header.end());
    out.insert(out.end(), payload, payload + n);
    return Status::ok();
  }
  std::string text;
  const uint64_t itemsize = schema.dtype.itemsize;
  for (uint64_t i = 0; i < n / itemsize; ++i) {
    if (i > 0) text += ' ';
    append_json_record(text, schema.dtype, {}, payload + i * itemsize);
  }
  out.assign(text.begin(), text.end());
  return Status::ok();
}

// Two streams whose members would take one name ("vec" of arrays writes "KEY.vec.npy",
// as a stream "vec.npy" of bytes does): the tar could not tell them apart.
Status refuse_same_members(const std::vector<ExportStream>& streams) {
  for (const ExportStream& s : streams)
    for (const ExportStream& t : streams)
      if (&s != &t && s.kind == MemberKind::kNpy && s.member_ext == t.ext)
        return invalid_argument("stream '" + s.ext + "' is " + s.store->schema().describe() +
                                " and writes its arrays as members KEY." + s.member_ext + ", the names of stream '" +
                                t.ext + "'; --arrays text writes it as numbers, or rename one of them");
  return Status::ok();
}

// What an export reads: one stream per store of a root (its committed streams and
// samples) or the one store named, each checked to be writable as tar members.
struct ExportSet {
  std::vector<ExportStream> streams;
  uint64_t length = 0;  // samples
};

Result<ExportSet> open_export(const CatTarArgs& a, const GlobalOptions& g) {
  ExportSet set;
  const Context ctx = g.read_context(a.path);
  const bool single = is_store_dir(a.path, ctx);
  // A root append-tar marked: its streams, up to its committed samples.
  std::optional<Dataset> root;
  std::vector<std::string> names{""};
  if (!single) {
    ZREC_ASSIGN_OR_RETURN(Dataset ds, Dataset::open(a.path, {}, ctx));
    names = ds.stores();
    if (ds.marked()) root = std::move(ds);
  }
  if (single) {
    if (const std::string why = stream_name_problem(base_name(a.path)); !why.empty())
      return invalid_argument("store '" + a.path + "': its name '" + base_name(a.path) +
                              "' would be the members' extension, and cannot name a stream: " + why + " (" +
                              kStreamNameRule + ")");
  } else {
    // Every store in the directory, listed in the marker or not: one whose name breaks
    // the rule is refused as append-tar refuses it (it could be mistaken for a stream).
    ZREC_RETURN_IF_ERROR(check_root_streams(a.path, names));
    // and a stream that is a link or no directory, as every command reading a root does.
    if (root)
      for (const auto& name : names) ZREC_RETURN_IF_ERROR(check_root_stream(a.path, name));
  }
  if (root) {
    std::erase_if(names, [&](const std::string& n) { return !std::ranges::binary_search(root->streams(), n); });
    // A listed stream that is gone (or a FIFO, a file) would leave its members out of
    // every sample; one with no committed sample may be gone (as append-tar allows).
    for (const StreamProblem& p : root->problems({}))
      if (p.kind == StreamProblem::Kind::kMissing)
        return invalid_argument("root '" + a.path + "' lists the stream '" + printable(p.stream) + "' in " +
                                kRootMarkerFile + ", but '" + printable(join_path(a.path, p.stream)) +
                                "' is not a store; nothing was written");
  }
  if (names.empty()) return not_found("'" + a.path + "' is not a zrecord store and holds none");
  if (a.with_ids)
    for (const auto& name : names)
      if ((single ? base_name(a.path) : name) == kIdExtension)
        return invalid_argument("--with-ids writes each sample's ID as its '." + std::string(kIdExtension) +
                                "' member, and stream '" + printable(single ? a.path : name) +
                                "' already writes members of that name");
  std::vector<ExportStream>& streams = set.streams;
  for (const auto& name : names) {
    ExportStream s;
    s.ext = single ? base_name(a.path) : name;
    ZREC_ASSIGN_OR_RETURN(s.store, Store::open(single ? a.path : join_path(a.path, name), {}, ctx));
    const Schema& schema = s.store->schema();
    const char kind = schema.dtype.str().size() > 1 ? schema.dtype.str()[1] : '?';
    s.kind = tar_member_kind(schema, a.arrays_as_text);
    s.member_ext = s.kind == MemberKind::kNpy ? s.ext + ".npy" : s.ext;
    if (s.kind == MemberKind::kText && kind != 'i' && kind != 'u' && kind != 'f')
      return invalid_argument("stream '" + s.ext + "' is " + schema.describe() +
                              "; with --arrays text a tar member holds bytes ('|u1') or numbers (integer or float "
                              "dtypes); --arrays npy writes any array");
    if (root && s.store->length() < root->length())
      return invalid_argument("stream '" + s.ext + "' holds " + std::to_string(s.store->length()) +
                              " records, fewer than the " + std::to_string(root->length()) + " samples root '" +
                              a.path + "' committed");
    if (!root && !streams.empty() && s.store->length() != streams.front().store->length())
      return invalid_argument("the streams of '" + a.path + "' hold different numbers of records ('" +
                              streams.front().ext + "' " + std::to_string(streams.front().store->length()) + ", '" +
                              s.ext + "' " + std::to_string(s.store->length()) +
                              "), and it is no root append-tar built (no zrec-root marker) to say which are samples");
    streams.push_back(std::move(s));
  }
  for (ExportStream& s : streams) s.keys = root && s.ext == kKeyStream;
  ZREC_RETURN_IF_ERROR(refuse_same_members(streams));
  set.length = root ? root->length() : streams.front().store->length();
  return set;
}

// Why `key` cannot name the members of a sample, or empty (as GNU tar extracts them).
std::string key_problem(const std::string& key, bool absolute_names) {
  if (key.find('\0') != std::string::npos) return "holds a NUL byte, which no tar member name can";
  if (absolute_names) return {};
  if (const std::string why = unsafe_member_name(key); !why.empty())
    return "would be a member name that extracts outside the directory (" + why +
           "); --absolute-names keeps such names";
  return {};
}

// The keys of a root's __key__ stream, checked as member names before the output is
// opened (a scan of the first `length` records; nothing is kept).
Status check_stream_keys(const CatTarArgs& a, Store& keys, uint64_t length) {
  constexpr uint64_t kIdsPerScan = uint64_t{1} << 20;
  std::vector<uint64_t> ids;
  const uint64_t prefix = keys.schema().shape_prefix_bytes();
  for (uint64_t first = 0; first < length; first += kIdsPerScan) {
    ids.clear();
    for (uint64_t id = first; id < std::min(length, first + kIdsPerScan); ++id) ids.push_back(id);
    ZREC_RETURN_IF_ERROR(keys.scan(ids, kDefaultWindowBytes, [&](const Window& w) -> Status {
      for (size_t r = 0; r < w.ids.size(); ++r) {
        const std::string key(reinterpret_cast<const char*>(w.data + w.offsets[r] + prefix),
                              w.offsets[r + 1] - w.offsets[r] - prefix);
        if (const std::string why = key_problem(key, a.absolute_names); !why.empty())
          return invalid_argument("stream '" + std::string(kKeyStream) + "' of root '" + a.path + "' record " +
                                  std::to_string(w.ids[r]) + ": the key '" + printable(key) + "' " + why);
      }
      return Status::ok();
    }));
  }
  return Status::ok();
}

// The --keys file's keys, each checked as a member name before the output is opened, so
// that a refused key leaves no partial tar behind; empty without --keys.
Result<std::vector<std::string>> member_keys(const CatTarArgs& a, uint64_t length) {
  if (a.keys.empty()) return std::vector<std::string>{};
  ZREC_ASSIGN_OR_RETURN(std::vector<std::string> keys, read_keys(a.keys));
  if (keys.size() < length)
    return invalid_argument("keys file '" + a.keys + "' has " + std::to_string(keys.size()) + " lines; '" + a.path +
                            "' holds " + std::to_string(length) + " records");
  for (uint64_t id = 0; id < length; ++id)
    if (const std::string why = key_problem(keys[id], a.absolute_names); !why.empty())
      return invalid_argument("keys file '" + a.keys + "' line " + std::to_string(id + 1) + ": the key '" + keys[id] +
                              "' " + why);
  return keys;
}

// The tar being written: one, or with --maxcount/--maxsize a new one (the pattern's next
// name) whenever the next sample would pass either limit, as webdataset's ShardWriter.
class TarOutput {
 public:
  TarOutput(const CatTarArgs& a, const LibArchive& la, std::optional<ShardPattern> pattern)
      : a_(a),
        la_(la),
        pattern_(std::move(pattern)),
        ar_(nullptr, la.archive_write_free),
        entry_(la.archive_entry_new(), la.archive_entry_free) {}

  bool sharded() const { return pattern_.has_value(); }
  uint64_t shards() const { return shards_; }
  uint64_t bytes() const { return bytes_; }
  const ShardPattern& pattern() const { return *pattern_; }

  // Before a sample of `sample_bytes` (its members as the tar holds them): a new shard
  // when the current one is full (or none is open).
  Status begin_sample(uint64_t sample_bytes) {
    if (!sharded()) return ar_ ? Status::ok() : open();
    const bool full = samples_ > 0 && ((a_.maxcount > 0 && samples_ >= a_.maxcount) ||
                                       (a_.maxsize > 0 && shard_bytes_ + sample_bytes > a_.maxsize));
    if (!ar_ || full) {
      ZREC_RETURN_IF_ERROR(close());
      ZREC_RETURN_IF_ERROR(open());
    }
    ++samples_;
    shard_bytes_ += sample_bytes;
    return Status::ok();
  }

  Status write_member(const std::string& name, const void* data, size_t size) {
    la_.archive_entry_clear(entry_.get());
    la_.archive_entry_set_pathname(entry_.get(), name.c_str());
    la_.archive_entry_set_filetype(entry_.get(), AE_IFREG);
    la_.archive_entry_set_perm(entry_.get(), 0644);
    la_.archive_entry_set_size(entry_.get(), static_cast<la_int64_t>(size));
    const int rc = la_.archive_write_header(ar_.get(), entry_.get());
    if (rc != ARCHIVE_OK && !(rc == ARCHIVE_WARN && name_kept_as_bytes())) return error("header");
    if (la_.archive_write_data(ar_.get(), data, size) != static_cast<la_ssize_t>(size)) return error("data");
    bytes_ += size;
    return Status::ok();
  }

  // Ends the last tar (with nothing selected, a sharded export still writes one, empty).
  Status finish() {
    if (shards_ == 0) ZREC_RETURN_IF_ERROR(open());
    ZREC_RETURN_IF_ERROR(close());
    finished_ = true;
    return Status::ok();
  }

  // An export that did not finish leaves no tar behind: the files it created are removed
  // (an empty or cut-off tar would pass for a smaller dataset).
  ~TarOutput() {
    if (finished_) return;
    ar_.reset();
    out_.reset();
    for (const std::string& path : created_) (void)::unlink(path.c_str());
  }

 private:
  // Whether the warning of the last header is libarchive's for a name it cannot convert
  // to UTF-8 from the locale's charset (zrec runs in the C locale, where any byte past
  // ASCII is such, also in a UTF-8 name): it then writes the name's bytes as they are,
  // marked hdrcharset=BINARY in its PAX header, so the member keeps the key's exact bytes
  // and tar readers get them back as such.
  bool name_kept_as_bytes() const {
    const char* why = la_.archive_error_string(ar_.get());
    return why != nullptr && std::string_view(why).starts_with("Can't translate pathname");
  }

  Status error(const char* what) const {
    if (!sink_.status.is_ok()) return sink_.status;
    const char* why = ar_ ? la_.archive_error_string(ar_.get()) : nullptr;
    return io_error(std::string("cannot write tar ") + what + ": " + (why != nullptr ? why : "unknown error"));
  }

  Status open() {
    const std::string path = pattern_ ? pattern_->name(shards_) : a_.output;
    if (pattern_) ZREC_RETURN_IF_ERROR(refuse_output_into_stores(path, "-o", {a_.path}));
    ZREC_ASSIGN_OR_RETURN(Output opened, Output::open(path, "-o", a_.force));
    struct stat st;
    if (path != "-" && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) created_.push_back(path);
    out_.emplace(std::move(opened));
    check_binary_output(*out_, a_.force);
    sink_.out = &*out_;
    ar_.reset(la_.archive_write_new());
    if (!ar_) return io_error("cannot start libarchive (out of memory)");
    la_.archive_write_set_format_pax_restricted(ar_.get());  // ustar, PAX headers only for long names
    la_.archive_write_set_bytes_in_last_block(ar_.get(), 1);
    if (la_.archive_write_open(ar_.get(), &sink_, nullptr, write_cb, nullptr) != ARCHIVE_OK) return error("header");
    ++shards_;
    samples_ = 0;
    shard_bytes_ = kTarEndBytes;
    return Status::ok();
  }

  Status close() {
    if (!ar_) return Status::ok();
    if (la_.archive_write_close(ar_.get()) != ARCHIVE_OK) return error("end");
    ar_.reset();
    ZREC_RETURN_IF_ERROR(out_->flush());
    out_.reset();
    return Status::ok();
  }

  const CatTarArgs& a_;
  const LibArchive& la_;
  const std::optional<ShardPattern> pattern_;
  std::optional<Output> out_;
  TarSink sink_{nullptr, Status::ok()};
  std::unique_ptr<struct archive, int (*)(struct archive*)> ar_;
  std::unique_ptr<struct archive_entry, void (*)(struct archive_entry*)> entry_;
  uint64_t shards_ = 0, samples_ = 0, shard_bytes_ = 0, bytes_ = 0;
  std::vector<std::string> created_;  // the regular files opened as output
  bool finished_ = false;
};

}  // namespace

Result<std::vector<IdRun>> selected_runs(const CatTarArgs& a, uint64_t length, std::vector<uint64_t>& list) {
  if (!a.indices_from.empty()) {
    if (!a.selection.empty()) throw UsageError("give a SELECTION or --indices-from, not both");
    ZREC_ASSIGN_OR_RETURN(SideInput in, SideInput::open(a.indices_from, "--indices-from"));
    ZREC_ASSIGN_OR_RETURN(list, read_indices(in.stream(), length));
    return std::vector<IdRun>{IdRun{0, 1, false, list.size()}};
  }
  if (a.selection.empty()) return std::vector<IdRun>{IdRun{0, 1, false, length}};
  auto items = parse_selection(a.selection);
  if (!items.is_ok()) throw UsageError(items.status().message());
  return resolve_runs(items.value(), length);
}

Status cat_tar(const CatTarArgs& a, const GlobalOptions& g) {
  // The stores (a root: all of it), the keys and the index list are read: -o must be
  // none of them (and is refused before anything is opened for writing).
  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.output, "-o", {a.path, a.keys, a.indices_from}));
  ZREC_RETURN_IF_ERROR(refuse_existing_output(a.output, "-o", a.force));
  ZREC_ASSIGN_OR_RETURN(ExportSet set, open_export(a, g));
  // The dataset's card (zrec card) goes beside the tar, not into it: WebDataset readers
  // would take a member "zrec-card.json" for a sample. `zrec card NEW --from` reads it.
  ZREC_ASSIGN_OR_RETURN(const std::optional<std::string> card, read_card(a.path, g.read_context(a.path)));
  const std::string card_path = card && a.output != "-" ? join_path(parent_directory(a.output), kCardFile) : "";
  if (!card_path.empty()) ZREC_RETURN_IF_ERROR(refuse_existing_output(card_path, "-o", a.force));
  std::vector<ExportStream>& streams = set.streams;
  const uint64_t length = set.length;
  std::vector<uint64_t> list;
  ZREC_ASSIGN_OR_RETURN(const std::vector<IdRun> runs, selected_runs(a, length, list));
  ZREC_ASSIGN_OR_RETURN(const std::vector<std::string> keys, member_keys(a, length));
  // A root that keeps its keys (a __key__ stream) names the members by them, unless --keys.
  const auto key_stream = std::find_if(streams.begin(), streams.end(), [](const ExportStream& s) { return s.keys; });
  const bool keys_from_stream = keys.empty() && key_stream != streams.end();
  if (keys_from_stream) ZREC_RETURN_IF_ERROR(check_stream_keys(a, *key_stream->store, length));
  const size_t width = std::max<size_t>(6, std::to_string(length > 0 ? length - 1 : 0).size());
  const auto key_of = [&](uint64_t id) {
    if (!keys.empty()) return keys[id];
    std::string k = std::to_string(id);
    return std::string(width - std::min(width, k.size()), '0') + k;
  };

  std::optional<ShardPattern> pattern;
  if (a.maxcount > 0 || a.maxsize > 0) {
    if (a.output == "-") throw UsageError("--maxcount and --maxsize write shards: give -o 'shard-%06d.tar'");
    auto parsed = ShardPattern::parse(a.output);
    if (!parsed.is_ok()) throw UsageError(parsed.status().message());
    pattern = std::move(parsed).value();
    ZREC_RETURN_IF_ERROR(refuse_existing_shards(*pattern, a.output, a.force));
  }
  ZREC_ASSIGN_OR_RETURN(const LibArchive* la, libarchive());  // before any output file is created
  TarOutput tar(a, *la, std::move(pattern));
  if (!tar.sharded()) ZREC_RETURN_IF_ERROR(tar.begin_sample(0));  // the one tar, even for no sample

  // The sample at output position i: the selection in order, shuffled, or drawn without
  // replacement (the first N of the shuffle), as cat's other formats write them.
  const SelectionIndex selection(runs, list);
  ZREC_ASSIGN_OR_RETURN(
      const RecordOrder order,
      RecordOrder::of(selection,
                      {.sample = a.sample, .distinct = true, .shuffle = a.shuffle, .seed = a.seed, .unit = "samples"}));
  const uint64_t total = order.total();
  const auto id_at = [&order](uint64_t i) { return order.id_at(i); };
  ProgressMeter meter(g, "cat");
  meter.set_total_records(total);
  uint64_t done = 0;
  const uint64_t window = (a.window_mib == 0 ? kDefaultWindowBytes >> 20 : a.window_mib) << 20;
  std::vector<uint64_t> ids;
  for (uint64_t k = 0; k < total; k += kChunkSamples) {
    ids.clear();
    for (uint64_t j = k; j < std::min(total, k + kChunkSamples); ++j) ids.push_back(id_at(j));
    for (auto& s : streams) {
      s.chunk.assign(ids.size(), {});
      ZREC_RETURN_IF_ERROR(s.store->scan(ids, window, [&](const Window& w) -> Status {
        for (size_t r = 0; r < w.ids.size(); ++r)
          ZREC_RETURN_IF_ERROR(
              member_bytes(s, w.data + w.offsets[r], w.offsets[r + 1] - w.offsets[r], s.chunk[w.first_index + r]));
        return Status::ok();
      }));
    }
    for (size_t r = 0; r < ids.size(); ++r) {
      const std::string key =
          keys_from_stream ? std::string(key_stream->chunk[r].begin(), key_stream->chunk[r].end()) : key_of(ids[r]);
      const std::string id = std::to_string(ids[r]);
      if (tar.sharded()) {
        uint64_t sample_bytes = 0;
        for (const auto& s : streams)
          if (!s.keys) sample_bytes += tar_member_bytes(key + "." + s.member_ext, s.chunk[r].size());
        if (a.with_ids) sample_bytes += tar_member_bytes(key + "." + kIdExtension, id.size());
        ZREC_RETURN_IF_ERROR(tar.begin_sample(sample_bytes));
      }
      for (auto& s : streams)
        if (!s.keys)
          ZREC_RETURN_IF_ERROR(tar.write_member(key + "." + s.member_ext, s.chunk[r].data(), s.chunk[r].size()));
      if (a.with_ids) ZREC_RETURN_IF_ERROR(tar.write_member(key + "." + kIdExtension, id.data(), id.size()));
      meter.update(++done, tar.bytes());
    }
  }
  ZREC_RETURN_IF_ERROR(tar.finish());
  meter.finish();
  if (!card_path.empty()) {
    ZREC_ASSIGN_OR_RETURN(Output card_out, Output::open(card_path, "-o", a.force));
    ZREC_RETURN_IF_ERROR(card_out.write(*card));
    ZREC_RETURN_IF_ERROR(card_out.flush());
    if (g.verbosity >= 0)
      std::fprintf(stderr, "zrec cat: wrote the dataset card to %s (zrec card DEST --from reads it)\n",
                   printable(card_path).c_str());
  }
  if (tar.sharded() && g.verbosity >= 0)
    std::fprintf(stderr, "zrec cat: wrote %llu sample%s in %llu shard%s (%s to %s)\n",
                 static_cast<unsigned long long>(done), done == 1 ? "" : "s",
                 static_cast<unsigned long long>(tar.shards()), tar.shards() == 1 ? "" : "s",
                 printable(tar.pattern().name(0)).c_str(), printable(tar.pattern().name(tar.shards() - 1)).c_str());
  return Status::ok();
}

}  // namespace zrec::cli
