// save_dictionary_file (zrec/dict.h): a dictionary file written whole or not at all.
#include <fcntl.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "zrec/dict.h"
#include "zrec/file.h"

#include "store/temp_files.h"

namespace zrec {

Status save_dictionary_file(const std::string& path, std::span<const uint8_t> dictionary) {
  // The name is cut so that "NAME.tmp-XXXXXX" fits NAME_MAX.
  const std::filesystem::path target(path);
  const std::string parent = target.has_parent_path() ? target.parent_path().string() : ".";
  const std::string prefix = target.filename().string().substr(0, NAME_MAX - 11) + ".tmp-";
  store::remove_abandoned_temp_dicts(parent, prefix);
  std::string tmpl = (target.has_parent_path() ? parent + "/" : std::string()) + prefix + "XXXXXX";
  const int fd = io::make_temp_file(tmpl);
  if (fd < 0) return io::errno_status(errno, "cannot create a file next to", path);
  io::File f(fd, tmpl);
  // Locked before its first byte, so a concurrent cleanup never takes a live temporary.
  // A blocking lock: that cleanup may hold it for the moment it takes to look at the
  // file, and leaves an empty one this young alone.
  Status s;
  if (io::retry_eintr([&] { return ::flock(fd, LOCK_EX); }) != 0) s = io::errno_status(errno, "cannot lock", tmpl);
  if (s.is_ok() && io::retry_eintr([&] { return ::fchmod(fd, 0644); }) != 0)
    s = io::errno_status(errno, "cannot chmod", tmpl);
  if (s.is_ok()) s = f.pwrite_all(dictionary.data(), dictionary.size(), 0);
  if (s.is_ok()) s = f.sync();
  if (s.is_ok() && io::retry_eintr([&] { return ::rename(tmpl.c_str(), path.c_str()); }) != 0)
    s = io::errno_status(errno, "cannot rename to", path);
  if (!s.is_ok()) ::unlink(tmpl.c_str());
  return s;
}

}  // namespace zrec
