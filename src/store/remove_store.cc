// remove_empty_store: take back a store a failed command created (zrec/store_writer.h).
#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "zrec/dataset.h"
#include "zrec/store_writer.h"

#include "format/layout.h"
#include "store/store_files.h"

namespace zrec {

Status remove_empty_store(const std::string& path) {
  ZREC_ASSIGN_OR_RETURN(store::StoreFiles files, store::load_store_files(path, io::LockMode::kExclusive, Context{}));
  if (files.page.length != 0)
    return invalid_argument("'" + path + "' holds " + std::to_string(files.page.length) + " records; it is kept");
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return io::errno_status(errno, "cannot list", path);
  std::string other;
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || name == format::kMetaFile) continue;
    bool own = name == format::kDictFile || name == kCodecAutoFile;
    for (uint32_t s = 0; s < files.page.data_shards && !own; ++s) own = name == format::data_file_name(s);
    if (!own && other.empty()) other = name;
    names.push_back(name);
  }
  ::closedir(dir);
  if (!other.empty())
    return invalid_argument("'" + path + "' holds '" + other + "', which is not a store file; it is kept");
  // meta.zr first: a crash from here on leaves a directory that is no store.
  const std::string meta = join_path(path, format::kMetaFile);
  if (io::retry_eintr([&] { return ::unlink(meta.c_str()); }) != 0)
    return io::errno_status(errno, "cannot remove", meta);
  files.meta.close();
  files.data.clear();
  for (const auto& name : names) {
    const std::string p = join_path(path, name);
    if (io::retry_eintr([&] { return ::unlink(p.c_str()); }) != 0) return io::errno_status(errno, "cannot remove", p);
  }
  if (io::retry_eintr([&] { return ::rmdir(path.c_str()); }) != 0)
    return io::errno_status(errno, "cannot remove", path);
  return Status::ok();
}

}  // namespace zrec
