// create: build an empty store in a temporary sibling directory and rename it into
// place, so a failed create never leaves a half-made store at the user's path.
// build_store() does the same for a store that is filled before it is renamed
// (recompress, concat): the temporary is locked while it is built, so the next build of
// the same path can tell an abandoned temporary (a killed build) and remove it.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "zrec/store_writer.h"

#include "codec/record_codec.h"
#include "format/schema_msgpack.h"
#include "format/static_page.h"
#include "store/store_files.h"
#include "store/temp_sibling.h"
#include "zrec_support/file.h"

namespace zrec {

namespace {

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
  if (options.codec_auto)
    ZREC_RETURN_IF_ERROR(write_file(join_path(dir, kCodecAutoFile), kCodecAutoText, std::strlen(kCodecAutoText)));
  return io::sync_directory(dir);
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
  if (options.codec_auto && (options.codec != Codec::kZstd || options.checksum))
    return invalid_argument("a store whose codec the first append chooses starts as zstd, without checksums");
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

Status create_store(const std::string& user_path, const CreateOptions& options, const Context& ctx) {
  // Validate everything before touching the disk.
  ZREC_ASSIGN_OR_RETURN(const std::string schema_bytes, validate_create(options));
  const std::string path = store::strip_trailing_slashes(user_path);
  ZREC_ASSIGN_OR_RETURN(bool free, is_free(path));
  if (!free) return store::already_exists(user_path, false);

  store::remove_abandoned_build_temps(path, ctx.warn);
  ZREC_ASSIGN_OR_RETURN(auto tmp, store::TempSibling::make(path, store::TempKind::kBuild));
  ZREC_RETURN_IF_ERROR(populate(tmp->path(), options, schema_bytes));
  ZREC_RETURN_IF_ERROR(tmp->rename_to(path, user_path, /*no_replace=*/false));
  return store::sync_parent(path, user_path);
}

Status build_store(const std::string& user_path, const CreateOptions& options, const WriterOptions& writer_options,
                   const std::function<Status(StoreWriter&)>& fill, const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(const std::string schema_bytes, validate_create(options));
  ZREC_ASSIGN_OR_RETURN(const std::string path, store::absent_build_target(user_path));
  store::remove_abandoned_build_temps(path, ctx.warn);
  ZREC_ASSIGN_OR_RETURN(auto tmp, store::TempSibling::make(path, store::TempKind::kBuild));
  ZREC_RETURN_IF_ERROR(populate(tmp->path(), options, schema_bytes));
  {
    ZREC_ASSIGN_OR_RETURN(auto writer, StoreWriter::open(tmp->path(), writer_options, ctx));
    Status s = fill(*writer);
    if (!s.is_ok()) return s;  // the writer aborts, then the temporary is removed
    ZREC_RETURN_IF_ERROR(writer->close());
  }
  ZREC_RETURN_IF_ERROR(tmp->rename_to(path, user_path, /*no_replace=*/true));
  return store::sync_parent(path, user_path);
}

}  // namespace zrec
