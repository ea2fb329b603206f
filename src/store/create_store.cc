// create: build an empty store in a temporary sibling directory and rename it into
// place, so a failed create never leaves a half-made store at the user's path.
// build_store() does the same for a store that is filled before it is renamed
// (recompress, concat): the temporary is locked while it is built, so the next build of
// the same path can tell an abandoned temporary (a killed build) and remove it.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>  // renameat2
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zrec/file.h"
#include "zrec/store_writer.h"

#include "codec/record_codec.h"
#include "format/schema_msgpack.h"
#include "format/static_page.h"
#include "store/store_files.h"
#include "store/temp_files.h"

namespace zrec {

namespace {

// The path without trailing slashes ("out/" -> "out"), so its parent and name are clear.
std::string strip_trailing_slashes(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

// Whether `path` is absent (true), an empty directory (true), or holds something (false).
Result<bool> is_free(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return true;
    return io::errno_status(errno, "cannot stat", path);
  }
  // rename(2) cannot put a directory where a symlink is; say so instead of "exists".
  if (S_ISLNK(st.st_mode))
    return invalid_argument("'" + path + "' is a symbolic link; create the store at the real path");
  if (!S_ISDIR(st.st_mode)) return false;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return io::errno_status(errno, "cannot open", path);
  bool empty = true;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name != "." && name != "..") empty = false;
  }
  ::closedir(dir);
  return empty;
}

Status write_file(const std::string& path, const void* data, size_t n) {
  ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_WRONLY | O_CREAT | O_EXCL, 0644));
  ZREC_RETURN_IF_ERROR(f.pwrite_all(data, n, 0));
  return f.sync();
}

Status populate(const std::string& dir, const CreateOptions& options, const std::string& schema_bytes) {
  format::StaticPage page;
  page.length = 0;
  page.data_shards = options.data_shards;
  page.codec = options.codec;
  page.schema = schema_bytes;
  const auto page_bytes = format::encode_static_page(page);
  std::vector<uint8_t> bytes(page_bytes.begin(), page_bytes.end());
  // The checksum setting of an empty store (CreateOptions::checksum): a marker past `length`.
  if (options.checksum)
    bytes.insert(bytes.end(), format::kChecksumMarker, format::kChecksumMarker + format::kRecordLocSize);
  ZREC_RETURN_IF_ERROR(write_file(join_path(dir, format::kMetaFile), bytes.data(), bytes.size()));
  for (uint32_t s = 0; s < options.data_shards; ++s)
    ZREC_RETURN_IF_ERROR(write_file(join_path(dir, format::data_file_name(s)), nullptr, 0));
  if (options.codec == Codec::kZstdDict)
    ZREC_RETURN_IF_ERROR(
        write_file(join_path(dir, format::kDictFile), options.dictionary.data(), options.dictionary.size()));
  return io::sync_directory(dir);
}

// ".NAME.zrec-tmp-" for a store at .../NAME: the prefix of its temporaries. NAME is
// cut so that the prefix and mkdtemp's 6 characters fit NAME_MAX, so a store may have
// any name the file system allows.
std::string temp_prefix(const std::filesystem::path& target) {
  constexpr size_t kFixed = std::char_traits<char>::length("..zrec-tmp-XXXXXX");
  const std::string name = target.filename().string();
  return "." + name.substr(0, NAME_MAX - kFixed) + ".zrec-tmp-";
}

std::string parent_of(const std::filesystem::path& target) {
  return target.has_parent_path() ? target.parent_path().string() : ".";
}

// A temporary sibling directory of the store being built, created by mkdtemp and
// locked (flock on the directory itself) for as long as this object lives. Once locked
// it gets the marker (store/temp_files.h) that lets a later run prove it is zrec's.
// Removed on destruction unless it was renamed into place.
class TempSibling {
 public:
  static Result<std::unique_ptr<TempSibling>> make(const std::string& path) {
    const std::filesystem::path target(path);
    const std::string parent = parent_of(target);
    std::string tmpl = join_path(parent, temp_prefix(target) + "XXXXXX");
    if (!io::make_temp_dir(tmpl)) return io::errno_status(errno, "cannot create a directory in", parent);
    std::unique_ptr<TempSibling> t(new TempSibling(tmpl));
    // mkdtemp makes 0700; a store is an ordinary directory, so apply the umask to 0777.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    // A failure fails the build: exit 0 would leave DST with the wrong permissions.
    if (io::retry_eintr([&] { return ::chmod(tmpl.c_str(), 0777 & ~mask); }) != 0)
      return io::errno_status(errno, "cannot set the permissions of", tmpl);
    ZREC_ASSIGN_OR_RETURN(t->dir_, io::File::open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    // A blocking lock: another run's cleanup (store/temp_files.h) may hold it for the
    // moment it takes to look inside, and leaves an unmarked directory this young alone.
    if (io::retry_eintr([&] { return ::flock(t->dir_.fd(), LOCK_EX); }) != 0)
      return io::errno_status(errno, "cannot lock", tmpl);
    ZREC_ASSIGN_OR_RETURN(io::File marker, io::File::open(join_path(tmpl, store::kTempMarker),
                                                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644));
    return t;
  }
  ~TempSibling() {
    if (renamed_) return;
    // Only what this build made: the store's files, the marker, the directory.
    DIR* d = ::opendir(path_.c_str());
    if (d != nullptr) {
      std::vector<std::string> names;
      while (dirent* e = ::readdir(d))
        if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
      ::closedir(d);
      for (const auto& n : names) (void)::unlinkat(dir_.fd(), n.c_str(), 0);
    }
    (void)::rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }

  // rename(2) replaces an empty directory atomically and fails if it gained entries;
  // with no_replace, renameat2(RENAME_NOREPLACE) fails if `path` exists at all.
  Status rename_to(const std::string& path, const std::string& user_path, bool no_replace) {
    const std::string marker = join_path(path_, store::kTempMarker);
    if (io::retry_eintr([&] { return ::unlink(marker.c_str()); }) != 0)
      return io::errno_status(errno, "cannot remove", marker);
    int r = -1;
    if (no_replace) {
      r = io::retry_eintr(
          [&] { return ::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE); });
      if (r != 0 && (errno == EINVAL || errno == ENOSYS)) {
        // A file system without RENAME_NOREPLACE: check, then rename (a narrow race).
        struct stat st;
        if (::lstat(path.c_str(), &st) == 0) return exists(user_path, no_replace);
        r = io::retry_eintr([&] { return ::rename(path_.c_str(), path.c_str()); });
      }
    } else {
      r = io::retry_eintr([&] { return ::rename(path_.c_str(), path.c_str()); });
    }
    if (r != 0) {
      if (errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR) return exists(user_path, no_replace);
      return io::errno_status(errno, "cannot rename the new store to", path);
    }
    renamed_ = true;
    return Status::ok();
  }

  static Status exists(const std::string& user_path, bool strict) {
    return Status(StatusCode::kAlreadyExists,
                  "'" + user_path + (strict ? "' already exists" : "' already exists and is not an empty directory"));
  }

 private:
  explicit TempSibling(std::string path) : path_(std::move(path)) {}
  std::string path_;
  io::File dir_;  // holds the flock
  bool renamed_ = false;
};

// Removes the temporaries of `path` that a killed build left behind, where they
// provably are zrec's (store/temp_files.h).
void remove_abandoned_temps(const std::string& path) {
  const std::filesystem::path target(path);
  store::remove_abandoned_temp_stores(parent_of(target), temp_prefix(target));
}

// The store is in place; only the fsync of its parent directory is left. A failure
// there is reported as what it is: the store exists, but its name may not survive a
// system crash.
Status sync_parent(const std::string& path, const std::string& user_path) {
  Status s = io::sync_directory(parent_of(path));
  if (s.is_ok()) return s;
  return Status(s.code(), "'" + user_path + "' was created and is complete, but " + s.message() +
                              " (the parent directory's fsync), so after a system crash it may be missing");
}

// Everything create checks before touching the disk; returns the schema's MsgPack bytes.
Result<std::string> validate_create(const CreateOptions& options) {
  ZREC_RETURN_IF_ERROR(options.schema.validate());
  if (options.data_shards < 1 || options.data_shards > format::kMaxShards)
    return invalid_argument("shards must be 1..255, not " + std::to_string(options.data_shards));
  if (options.codec == Codec::kZstdDict) {
    if (options.dictionary.empty()) return invalid_argument("codec zstd_dict needs a dictionary");
    auto d = codec::Dictionary::load(options.dictionary);
    if (!d.is_ok()) return invalid_argument("the dictionary is not usable: " + d.status().message());
  } else if (!options.dictionary.empty()) {
    return invalid_argument(std::string("a dictionary is only used with codec zstd_dict, not ") +
                            to_string(options.codec));
  }
  if (options.checksum && options.codec == Codec::kRaw)
    return invalid_argument(
        "checksums are zstd frame checksums; a raw store has no frames "
        "(per-record digests cover a raw store's payloads instead)");
  const std::string schema_bytes = format::encode_schema(options.schema);
  if (schema_bytes.size() > format::kMaxSchemaLength)
    return invalid_argument("the schema needs " + std::to_string(schema_bytes.size()) +
                            " bytes of MsgPack; the static page holds at most 2040");
  return schema_bytes;
}

}  // namespace

Status create_store(const std::string& user_path, const CreateOptions& options) {
  // Validate everything before touching the disk.
  ZREC_ASSIGN_OR_RETURN(const std::string schema_bytes, validate_create(options));
  const std::string path = strip_trailing_slashes(user_path);
  ZREC_ASSIGN_OR_RETURN(bool free, is_free(path));
  if (!free) return TempSibling::exists(user_path, false);

  remove_abandoned_temps(path);
  ZREC_ASSIGN_OR_RETURN(auto tmp, TempSibling::make(path));
  ZREC_RETURN_IF_ERROR(populate(tmp->path(), options, schema_bytes));
  ZREC_RETURN_IF_ERROR(tmp->rename_to(path, user_path, /*no_replace=*/false));
  return sync_parent(path, user_path);
}

Status build_store(const std::string& user_path, const CreateOptions& options, const WriterOptions& writer_options,
                   const std::function<Status(StoreWriter&)>& fill) {
  ZREC_ASSIGN_OR_RETURN(const std::string schema_bytes, validate_create(options));
  const std::string path = strip_trailing_slashes(user_path);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0) return TempSibling::exists(user_path, true);
  if (errno != ENOENT) return io::errno_status(errno, "cannot stat", path);

  remove_abandoned_temps(path);
  ZREC_ASSIGN_OR_RETURN(auto tmp, TempSibling::make(path));
  ZREC_RETURN_IF_ERROR(populate(tmp->path(), options, schema_bytes));
  {
    ZREC_ASSIGN_OR_RETURN(auto writer, StoreWriter::open(tmp->path(), writer_options));
    Status s = fill(*writer);
    if (!s.is_ok()) return s;  // the writer aborts, then the temporary is removed
    ZREC_RETURN_IF_ERROR(writer->close());
  }
  ZREC_RETURN_IF_ERROR(tmp->rename_to(path, user_path, /*no_replace=*/true));
  return sync_parent(path, user_path);
}

}  // namespace zrec
