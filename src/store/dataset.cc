// Store directories (zrec/store.h: join_path, is_store_dir) and the stores in a
// directory of named streams (zrec/dataset.h: child_stores).
#include "zrec/dataset.h"

#include <sys/stat.h>

#include <algorithm>

#include "zrec/remote.h"
#include "zrec/store.h"

#include "io/location.h"
#include "io/remote_file.h"
#include "store/store_files.h"
#include "zrec_support/file.h"

namespace zrec {

namespace {

// ".NAME.zrec-tmp-XXXXXX" and ".NAME.zrec-join-XXXXXX": the temporary directories a
// store is built or joined in (store/temp_sibling.h) before it is renamed to NAME.
bool is_build_leftover(const std::string& name) {
  return name.starts_with('.') &&
         (name.find(".zrec-tmp-") != std::string::npos || name.find(".zrec-join-") != std::string::npos);
}

}  // namespace

std::string join_path(const std::string& dir, const std::string& name) { return io::Location(dir).child(name).path(); }

bool is_store_dir(const std::string& path, const Context& ctx) {
  const io::Location at(path);
  if (at.remote()) {
    // Absent, or hidden from whoever may not list the bucket: not a store. Any other
    // failure (TLS, the connection, a server ignoring Range) counts as a store, so that
    // opening it says what went wrong.
    auto meta = at.child(kMetaFile).open_for_reading(1, ctx);
    return meta.is_ok() || (meta.status().code() != StatusCode::kNotFound && !io::access_denied(meta.status()));
  }
  const std::string meta = join_path(path, kMetaFile);
  struct stat st;
  if (::stat(meta.c_str(), &st) != 0) return false;
  // A meta.zr that is a store itself is a stream of that name in a root, not a file.
  return !S_ISDIR(st.st_mode) || ::stat(join_path(meta, kMetaFile).c_str(), &st) != 0;
}

std::vector<std::string> child_stores(const std::string& root, const Context& ctx) {
  std::vector<std::string> out;
  const io::Location at(root);
  if (at.remote()) {  // a URL is never listed: a remote root's streams are its marker's
    auto marker = read_root_marker(root, ctx);
    if (marker.is_ok() && marker.value()) out = marker.value()->streams;
    return out;
  }
  for (const auto& name : at.entry_names())
    if (!is_build_leftover(name) && is_store_dir(at.child(name).path())) out.push_back(name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace zrec
