// The root marker ROOT/zrec-root: its bytes, its lock and its commits (zrec/dataset.h,
// docs/format.md §12).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "zrec/dataset.h"
#include "zrec/remote.h"

#include "io/location.h"
#include "io/store_lock.h"
#include "store/root_marker.h"
#include "store/root_writer.h"
#include "store/store_files.h"
#include "store/temp_files.h"
#include "store/temp_sibling.h"

namespace zrec {

namespace {

constexpr const char* kHeader = "zrec-root 1";
// Temporaries of create() and commit(): ".zrec-root.tmp-" + mkstemp's 6 characters.
constexpr const char* kTempPrefix = ".zrec-root.tmp-";
// A marker is a few lines per stream; anything larger is not one.
constexpr uint64_t kMaxRootMarkerBytes = uint64_t{1} << 20;
// How often open() starts over when the marker it locked was replaced or removed
// meanwhile (each time another writer held it and changed it).
constexpr int kMaxReopens = 1000;

std::string marker_path(const std::string& root) { return join_path(root, kRootMarkerFile); }

// Why `name` cannot be a stream of a root, or empty.
std::string bad_stream_name(const std::string& name) {
  if (name.empty()) return "is empty";
  if (name == "." || name == "..") return "is '" + name + "'";
  if (name.find('/') != std::string::npos) return "holds '/'";
  if (name.find('\0') != std::string::npos) return "holds a NUL byte";
  return "";
}

void append_escaped(std::string& out, const std::string& name) {
  for (char c : name) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
}

// Undoes append_escaped; false on a backslash that starts no escape, or a raw CR.
bool unescape(std::string_view in, std::string& out) {
  out.clear();
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '\r') return false;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i == in.size()) return false;
    if (in[i] == '\\') out += '\\';
    else if (in[i] == 'n') out += '\n';
    else if (in[i] == 'r') out += '\r';
    else return false;
  }
  return true;
}

Status not_a_regular_file(const std::string& path) {
  return invalid_argument("'" + path + "' is not a regular file (a root's marker is one)");
}

// The lock of a root, in messages: "root 'ds/'" where the store lock says "store '...'".
Status lock_marker(const io::File& marker, const LockWait& wait, const CancelToken& cancel, const std::string& root) {
  Status s = io::lock_store(marker, io::LockMode::kExclusive, wait, cancel, root);
  if (s.is_ok()) return s;
  if (s.code() == StatusCode::kBusy && s.message().starts_with("store '" + root + "' is locked"))
    return Status(StatusCode::kBusy, "root '" + root + "' is locked by another process (a writer of its streams)");
  // Why a --wait can never end (zrec/context.h), said of the root.
  if (s.code() == StatusCode::kBusy && s.message().starts_with("store '" + root + "'"))
    return Status(StatusCode::kBusy, "root" + s.message().substr(5));
  if (s.code() == StatusCode::kCancelled)
    return Status(StatusCode::kCancelled,
                  "interrupted while waiting for the lock on root '" + root + "'; nothing was changed");
  return s;
}

// A new temporary marker in `root` holding `bytes`, locked, synced, mode 0644.
Result<io::File> write_temporary(const std::string& root, const std::string& bytes) {
  std::string tmpl = join_path(root, std::string(kTempPrefix) + "XXXXXX");
  return store::write_locked_temp(tmpl, bytes, "cannot create a temporary in", root);
}

// Removes the marker temporaries that no live writer holds (a commit or create killed
// midway). `marker` is the marker this process holds, or null: a temporary that is
// another name of it was linked into place by a create() killed before it unlinked that
// name; its lock is the marker's, held here, so only the inode tells it apart.
void remove_stale_temporaries(const std::string& root, const io::File* marker) {
  struct stat held {};
  if (marker != nullptr && ::fstat(marker->fd(), &held) != 0) marker = nullptr;
  for (const auto& name : root_temporaries(root)) {
    if (!name.starts_with(kTempPrefix)) continue;  // a stream's (store/temp_sibling.h)
    const std::string path = join_path(root, name);
    const int fd = io::retry_eintr([&] { return ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW); });
    if (fd < 0) continue;
    io::File f(fd, path);
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) continue;
    const bool marker_link = marker != nullptr && st.st_dev == held.st_dev && st.st_ino == held.st_ino;
    if (marker_link || ::flock(fd, LOCK_EX | LOCK_NB) == 0) (void)::unlink(path.c_str());
  }
}

}  // namespace

Result<std::string> encode_root_marker(const RootState& state) {
  std::string out = std::string(kHeader) + "\nlength " + std::to_string(state.length) + "\n";
  for (size_t i = 0; i < state.streams.size(); ++i) {
    const std::string& name = state.streams[i];
    const std::string why = bad_stream_name(name);
    if (!why.empty()) return invalid_argument("a root's stream name " + why);
    if (i > 0 && !(state.streams[i - 1] < name))
      return invalid_argument("a root's stream names must be sorted and distinct");
    out += "stream ";
    append_escaped(out, name);
    out += '\n';
  }
  return out;
}

Result<RootState> decode_root_marker(const std::string& bytes, const std::string& path) {
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kMalformed, "malformed root marker '" + path + "': " + what);
  };
  if (bytes.empty() || bytes.back() != '\n') return bad("it does not end with a newline");
  std::vector<std::string_view> lines;
  for (size_t at = 0; at < bytes.size();) {
    const size_t nl = bytes.find('\n', at);
    lines.emplace_back(bytes.data() + at, nl - at);
    at = nl + 1;
  }
  if (lines[0] != kHeader) return bad("its first line is not '" + std::string(kHeader) + "'");
  if (lines.size() < 2 || !lines[1].starts_with("length ")) return bad("its second line is not 'length N'");
  RootState state;
  const std::string_view digits = lines[1].substr(7);
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), state.length);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() ||
      (digits.size() > 1 && digits[0] == '0'))
    return bad("'" + std::string(lines[1]) + "' is not 'length N' with N a decimal count");
  std::string name;
  for (size_t i = 2; i < lines.size(); ++i) {
    if (!lines[i].starts_with("stream ") || !unescape(lines[i].substr(7), name))
      return bad("line " + std::to_string(i + 1) + " is not 'stream NAME'");
    const std::string why = bad_stream_name(name);
    if (!why.empty()) return bad("the stream name on line " + std::to_string(i + 1) + " " + why);
    if (!state.streams.empty() && !(state.streams.back() < name))
      return bad("the stream names are not sorted and distinct (line " + std::to_string(i + 1) + ")");
    state.streams.push_back(name);
  }
  return state;
}

namespace {

// The marker of `root` for reading (never through a link, never blocking: a FIFO named
// zrec-root would wait for a writer forever), or null when there is none. Anything but
// a regular file is refused. A remote one comes whole (1 MiB cap) with its first request.
Result<std::unique_ptr<const io::Readable>> open_marker(const std::string& root, const Context& ctx) {
  return io::Location(root).child(kRootMarkerFile).open_if_present(kMaxRootMarkerBytes + 1, ctx, not_a_regular_file);
}

// The state in the marker `f` (at `path`) of `size` bytes, which must be at most 1 MiB.
Result<RootState> read_marker_state(const io::Readable& f, off_t size, const std::string& path) {
  if (static_cast<uint64_t>(size) > kMaxRootMarkerBytes)
    return Status(StatusCode::kMalformed, "malformed root marker '" + path + "': it is larger than 1 MiB");
  std::string bytes(static_cast<size_t>(size), '\0');
  ZREC_RETURN_IF_ERROR(f.pread_exact(bytes.data(), bytes.size(), 0));
  return decode_root_marker(bytes, path);
}

}  // namespace

Result<std::optional<RootState>> read_root_marker(const std::string& root, const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(const auto f, open_marker(root, ctx));
  if (!f) return std::optional<RootState>();
  ZREC_ASSIGN_OR_RETURN(const uint64_t size, f->size());
  ZREC_ASSIGN_OR_RETURN(RootState state, read_marker_state(*f, static_cast<off_t>(size), f->path()));
  return std::optional<RootState>(std::move(state));
}

std::vector<std::string> root_temporaries(const std::string& root) {
  std::vector<std::string> names;
  const std::string marker_prefix = kTempPrefix, build_tag = ".zrec-tmp-";
  constexpr size_t kRandom = 6;                                       // mkstemp's and mkdtemp's characters
  for (const std::string& name : io::Location(root).entry_names()) {  // a URL lists nothing
    const bool marker = name.size() == marker_prefix.size() + kRandom && name.starts_with(marker_prefix);
    const bool stream = name.size() > 1 + build_tag.size() + kRandom && name.starts_with('.') &&
                        name.substr(name.size() - kRandom - build_tag.size(), build_tag.size()) == build_tag;
    if (marker || stream) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status check_root_stream(const std::string& root, const std::string& name) {
  // A URL has no links: its stream is what the server serves there.
  if (io::Location(root).remote()) return Status::ok();
  const std::string path = join_path(root, name);
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return io::errno_status(errno, "cannot stat", path);
  if (S_ISLNK(st.st_mode))
    return invalid_argument("stream '" + name + "' of root '" + root +
                            "' is a symbolic link: a root's streams are directories inside it (a writer's "
                            "recovery cuts them back, which would cut the store it points to); copy it in");
  if (!S_ISDIR(st.st_mode)) return invalid_argument("stream '" + name + "' of root '" + root + "' is not a directory");
  return Status::ok();
}

namespace {

// The last word of a path without trailing slashes.
std::string last_word(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The canonical path (links resolved), or empty when there is none.
std::string canonical(const std::string& path) {
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return {};
  std::string out(real);
  ::free(real);
  return out;
}

}  // namespace

Status refuse_root_stream(const std::string& store_path) {
  if (io::Location(store_path).remote()) return Status::ok();  // zrec writes only local stores
  // The directory the store really lies in: a link to a stream, or "ds/jpg/.", is the
  // stream all the same.
  const std::string real = canonical(store_path);
  if (real.empty() || real == "/") return Status::ok();  // opening it says what is wrong
  const std::string real_root = store::parent_of(real), name = last_word(real);
  ZREC_ASSIGN_OR_RETURN(const std::optional<RootState> state, read_root_marker(real_root));
  if (!state || !std::binary_search(state->streams.begin(), state->streams.end(), name)) return Status::ok();
  // Name the root as the user wrote it when the path says it plainly.
  const std::string given = store::strip_trailing_slashes(store_path);
  const std::string root =
      last_word(given) == name && canonical(store::parent_of(given)) == real_root ? store::parent_of(given) : real_root;
  return invalid_argument("'" + store_path + "' is the stream '" + name + "' of the root '" + root + "' (its " +
                          kRootMarkerFile +
                          " lists it): a root's streams grow together, one record per sample, so it is written "
                          "only through the root (zrec append-tar '" +
                          root + "'); nothing was written");
}

RootWriter::RootWriter(std::string root, io::File marker, RootState state)
    : root_(std::move(root)), marker_(std::move(marker)), state_(std::move(state)) {}

RootWriter::~RootWriter() = default;

Result<std::unique_ptr<RootWriter>> RootWriter::open(const std::string& root, const LockWait& wait,
                                                     const CancelToken& cancel) {
  const std::string path = marker_path(root);
  for (int tries = 0; tries < kMaxReopens; ++tries) {
    struct stat held;
    ZREC_ASSIGN_OR_RETURN(std::optional<io::File> opened,
                          io::Location(path).open_local_regular(O_RDWR, not_a_regular_file, &held));
    if (!opened) return not_found("'" + root + "' has no root marker (" + kRootMarkerFile + ")");
    io::File f = std::move(*opened);
    ZREC_RETURN_IF_ERROR(lock_marker(f, wait, cancel, root));
    // The writer we waited for may have replaced the marker (a commit) or removed it
    // (a run that failed before publishing): then this lock guards nothing.
    struct stat now;
    if (::stat(path.c_str(), &now) != 0 || now.st_dev != held.st_dev || now.st_ino != held.st_ino) continue;
    ZREC_ASSIGN_OR_RETURN(RootState state, read_marker_state(f, now.st_size, path));
    remove_stale_temporaries(root, &f);
    return std::unique_ptr<RootWriter>(new RootWriter(root, std::move(f), std::move(state)));
  }
  return Status(StatusCode::kBusy, "the marker of root '" + root + "' keeps changing (other writers at work)");
}

Result<std::unique_ptr<RootWriter>> RootWriter::create(const std::string& root, const RootState& initial) {
  ZREC_ASSIGN_OR_RETURN(std::string bytes, encode_root_marker(initial));
  const std::string path = marker_path(root);
  ZREC_ASSIGN_OR_RETURN(io::File temp, write_temporary(root, bytes));
  // link(2), not rename(2): it never replaces a marker another process made meanwhile.
  const int rc = io::retry_eintr([&] { return ::link(temp.path().c_str(), path.c_str()); });
  const int err = errno;
  (void)::unlink(temp.path().c_str());
  if (rc != 0) {
    // ENOENT: a writer of the root took the temporary for a stale one; a marker exists.
    if (err == EEXIST || err == ENOENT)
      return Status(StatusCode::kAlreadyExists, "'" + root + "' has a root marker already");
    return io::errno_status(err, "cannot create", path);
  }
  ZREC_RETURN_IF_ERROR(io::sync_directory(root));
  io::File marker(temp.release(), path);
  // A first run killed while its marker was a temporary left that temporary behind
  // (no marker named the root yet, so no open() swept it).
  remove_stale_temporaries(root, &marker);
  return std::unique_ptr<RootWriter>(new RootWriter(root, std::move(marker), initial));
}

Status RootWriter::commit(const RootState& state) {
  if (failed_) return invalid_argument("an earlier commit of root '" + root_ + "' failed");
  if (state == state_) return Status::ok();
  ZREC_ASSIGN_OR_RETURN(std::string bytes, encode_root_marker(state));
  const std::string path = marker_path(root_);
  failed_ = true;  // until this commit is known to be done
  ZREC_ASSIGN_OR_RETURN(io::File temp, write_temporary(root_, bytes));
  if (io::retry_eintr([&] { return ::rename(temp.path().c_str(), path.c_str()); }) != 0) {
    const Status s = io::errno_status(errno, "cannot commit root '" + root_ + "': cannot rename", temp.path());
    (void)::unlink(temp.path().c_str());
    return Status(s.code(),
                  s.message() + "; it still holds its previous state (" + std::to_string(state_.length) + " samples)");
  }
  // The new marker is in place and locked (the temporary was): let the old one go.
  marker_ = io::File(temp.release(), path);
  const RootState before = state_;
  state_ = state;
  Status s = io::sync_directory(root_);
  if (!s.is_ok())
    return Status(s.code(), s.message() + "; root '" + root_ + "' committed " + std::to_string(state.length) +
                                " samples, not confirmed durable: after a system crash it may hold the previous " +
                                std::to_string(before.length));
  failed_ = false;
  return Status::ok();
}

Status RootWriter::remove() {
  const std::string path = marker_path(root_);
  Status s;
  if (io::retry_eintr([&] { return ::unlink(path.c_str()); }) != 0) s = io::errno_status(errno, "cannot remove", path);
  if (s.is_ok()) s = io::sync_directory(root_);
  marker_.close();
  failed_ = true;
  return s;
}

}  // namespace zrec
