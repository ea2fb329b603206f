// create: build an empty store in a temporary sibling directory and rename it into
// place, so a failed create never leaves a half-made store at the user's path.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "codec/record_codec.h"
#include "format/schema_msgpack.h"
#include "format/static_page.h"
#include "io/file.h"
#include "store/store_files.h"
#include "zrec/store_writer.h"

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
  const auto bytes = format::encode_static_page(page);
  ZREC_RETURN_IF_ERROR(write_file(store::join_path(dir, format::kMetaFile), bytes.data(), bytes.size()));
  for (uint32_t s = 0; s < options.data_shards; ++s)
    ZREC_RETURN_IF_ERROR(write_file(store::join_path(dir, format::data_file_name(s)), nullptr, 0));
  if (options.codec == Codec::kZstdDict)
    ZREC_RETURN_IF_ERROR(write_file(store::join_path(dir, format::kDictFile), options.dictionary.data(),
                                    options.dictionary.size()));
  return io::sync_directory(dir);
}

}  // namespace

Status create_store(const std::string& user_path, const CreateOptions& options) {
  // Validate everything before touching the disk.
  ZREC_RETURN_IF_ERROR(options.schema.validate());
  if (options.data_shards < 1 || options.data_shards > format::kMaxShards)
    return invalid_argument("shards must be 1..255, not " + std::to_string(options.data_shards));
  if (options.codec == Codec::kZstdDict) {
    if (options.dictionary.empty()) return invalid_argument("codec zstd_dict needs a dictionary (--dict FILE)");
    auto d = codec::Dictionary::load(options.dictionary);
    if (!d.is_ok()) return invalid_argument("the dictionary is not usable: " + d.status().message());
  } else if (!options.dictionary.empty()) {
    return invalid_argument(std::string("a dictionary is only used with codec zstd_dict, not ") +
                            to_string(options.codec));
  }
  const std::string schema_bytes = format::encode_schema(options.schema);
  if (schema_bytes.size() > format::kMaxSchemaLength)
    return invalid_argument("the schema needs " + std::to_string(schema_bytes.size()) +
                            " bytes of MsgPack; the static page holds at most 2040");

  const std::string path = strip_trailing_slashes(user_path);
  ZREC_ASSIGN_OR_RETURN(bool free, is_free(path));
  if (!free) return Status(StatusCode::kAlreadyExists, "'" + user_path + "' already exists and is not an empty directory");

  const std::filesystem::path target(path);
  const std::string parent = target.has_parent_path() ? target.parent_path().string() : ".";
  std::string tmpl = store::join_path(parent, "." + target.filename().string() + ".zrec-tmp-XXXXXX");
  if (::mkdtemp(tmpl.data()) == nullptr) return io::errno_status(errno, "cannot create a directory in", parent);
  const std::string tmp = tmpl;
  ::chmod(tmp.c_str(), 0755);  // mkdtemp makes 0700; a store is an ordinary directory

  Status s = populate(tmp, options, schema_bytes);
  // rename(2) replaces an empty directory atomically and fails if it gained entries.
  if (s.is_ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR
            ? Status(StatusCode::kAlreadyExists, "'" + user_path + "' already exists and is not an empty directory")
            : io::errno_status(errno, "cannot rename the new store to", path);
  }
  if (!s.is_ok()) {
    std::error_code ec;
    std::filesystem::remove_all(tmp, ec);
    return s;
  }
  return io::sync_directory(parent);
}

}  // namespace zrec
