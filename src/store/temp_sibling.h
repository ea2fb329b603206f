// The temporary sibling directory a store is built in before it is renamed into place
// (docs/format.md §7): ".NAME.zrec-tmp-XXXXXX" for create, recompress and concat, which
// build it in one process, and ".NAME.zrec-join-XXXXXX" for a join in steps, which
// several processes fill one after another (zrec/join.h).
#pragma once

#include <memory>
#include <string>

#include "zrec/context.h"
#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::store {

enum class TempKind {
  kBuild,  // ".NAME.zrec-tmp-XXXXXX"
  kJoin,   // ".NAME.zrec-join-XXXXXX"
};

// The path without trailing slashes ("out/" -> "out"), so its parent and name are clear.
std::string strip_trailing_slashes(std::string p);
// The directory holding `path` ("." for a bare name).
std::string parent_of(const std::string& path);
// ".NAME.zrec-tmp-" or ".NAME.zrec-join-" for a store at .../NAME: the prefix of its
// temporaries, NAME cut so that the prefix and mkdtemp's 6 characters fit NAME_MAX.
std::string temp_prefix(const std::string& path, TempKind kind);

// A temporary sibling directory of the store being built, created by mkdtemp (mode
// 0777 less the umask) and locked (flock on the directory) for as long as this object
// lives. Once locked it gets the marker (store/temp_files.h) that lets a later run
// prove it is zrec's. Removed, with what this build put in it, on destruction unless it
// was renamed into place or kept.
class TempSibling {
 public:
  static Result<std::unique_ptr<TempSibling>> make(const std::string& path, TempKind kind);
  ~TempSibling();
  const std::string& path() const { return path_; }
  // The directory's descriptor (it holds the lock).
  const io::File& dir() const { return dir_; }

  // Removes the marker and renames the directory to `path`: rename(2) replaces an empty
  // directory atomically and fails if it gained entries; with no_replace,
  // renameat2(RENAME_NOREPLACE) fails if `path` exists at all (kAlreadyExists naming
  // user_path).
  Status rename_to(const std::string& path, const std::string& user_path, bool no_replace);
  // Leaves the directory in place on destruction (a join plan's, kept for its steps).
  void keep() { kept_ = true; }

 private:
  explicit TempSibling(std::string path) : path_(std::move(path)) {}
  std::string path_;
  io::File dir_;  // holds the flock
  bool kept_ = false;
};

// Renames the directory `from` to `path` with renameat2(RENAME_NOREPLACE) (check, then
// rename, on a file system without it). kAlreadyExists "'user_path' already exists".
Status rename_no_replace(const std::string& from, const std::string& path, const std::string& user_path);

// kAlreadyExists "'p' already exists" (strict) or "... and is not an empty directory".
Status already_exists(const std::string& user_path, bool strict);

// The path a build puts its result at: `user_path` without trailing slashes, when
// nothing is there (not even a dangling link): else already_exists(user_path, true).
Result<std::string> absent_build_target(const std::string& user_path);

// Removes the build temporaries of `path` that a killed build left behind, where they
// provably are zrec's (store/temp_files.h); what is left is said to `warn`.
void remove_abandoned_build_temps(const std::string& path, const WarningSink& warn);
// The same for a root at `path` (build_root), whose temporaries hold stream directories.
void remove_abandoned_root_temps(const std::string& path, const WarningSink& warn);

// Removes the build temporaries of every stream of the root `root` ("ROOT/.NAME.zrec-tmp-
// XXXXXX") that no live process locks, for a writer that holds the root's lock: streams
// are created only under that lock, so none of them is starting, and one without its
// marker is a kill's leftover too (between mkdtemp and the marker, or between the
// marker's removal and the rename), as long as it holds nothing but store files. The
// next creation of NAME removed only those with the marker, and a stream created
// meanwhile never had its leftovers removed at all. What is left is said to `warn`.
void remove_abandoned_stream_temps(const std::string& root, const WarningSink& warn);

// The store is in place; only the fsync of its parent directory is left. A failure
// there is reported as what it is: the store exists, but its name may not survive a
// system crash.
Status sync_parent(const std::string& path, const std::string& user_path);

}  // namespace zrec::store
