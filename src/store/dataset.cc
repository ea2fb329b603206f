// Store directories (zrec/store.h: join_path, is_store_dir) and the stores in a
// directory of named streams (zrec/dataset.h: child_stores).
#include "zrec/dataset.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>

#include "zrec/file.h"
#include "zrec/remote.h"
#include "zrec/store.h"

#include "io/remote_file.h"

namespace zrec {

namespace {

// ".NAME.zrec-tmp-XXXXXX" and ".NAME.zrec-join-XXXXXX": the temporary directories a
// store is built or joined in (store/temp_sibling.h) before it is renamed to NAME.
bool is_build_leftover(const std::string& name) {
  return name.starts_with('.') &&
         (name.find(".zrec-tmp-") != std::string::npos || name.find(".zrec-join-") != std::string::npos);
}

}  // namespace

std::string join_path(const std::string& dir, const std::string& name) {
  // An s3:// URL's key is the key as it is (zrec/remote.h): joined as a local path is.
  if (is_url(dir) && !is_s3_url(dir)) {  // the name goes into the path, before a query string (a CDN's token)
    const size_t query = dir.find_first_of("?#");
    const std::string base = dir.substr(0, query);
    // One segment: a name from a remote root's marker ("%2e%2e%2f...", "x?y=1", "x#f")
    // names a file inside the root, never another prefix or another query.
    const std::string joined = (base.ends_with('/') ? base : base + "/") + io::percent_encode(name, false);
    return query == std::string::npos ? joined : joined + dir.substr(query);
  }
  if (!dir.empty() && dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

bool is_store_dir(const std::string& path, const RemoteOptions& remote) {
  if (is_url(path)) {
    // Absent, or hidden from whoever may not list the bucket: not a store. Any other
    // failure (TLS, the connection, a server ignoring Range) counts as a store, so that
    // opening it says what went wrong.
    auto meta = io::File::open_url(join_path(path, kMetaFile), 1, remote);
    return meta.is_ok() || (meta.status().code() != StatusCode::kNotFound && !io::access_denied(meta.status()));
  }
  const std::string meta = join_path(path, kMetaFile);
  struct stat st;
  if (::stat(meta.c_str(), &st) != 0) return false;
  // A meta.zr that is a store itself is a stream of that name in a root, not a file.
  return !S_ISDIR(st.st_mode) || ::stat(join_path(meta, kMetaFile).c_str(), &st) != 0;
}

std::vector<std::string> child_stores(const std::string& root, const RemoteOptions& remote) {
  std::vector<std::string> out;
  if (is_url(root)) {  // no listing over HTTP: a remote root's streams are its marker's
    auto marker = read_root_marker(root, remote);
    if (marker.is_ok() && marker.value()) out = marker.value()->streams;
    return out;
  }
  DIR* dir = ::opendir(root.c_str());
  if (dir == nullptr) return out;
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || is_build_leftover(name)) continue;
    if (is_store_dir(join_path(root, name))) out.push_back(name);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace zrec
