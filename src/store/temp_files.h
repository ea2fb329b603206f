// Temporaries next to an output (".NAME.zrec-tmp-XXXXXX" store directories, "F.tmp-XXXXXX"
// dictionary files): how zrec marks them as its own, and how the next run removes those
// a killed run left behind without ever deleting what zrec did not create.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "zrec/context.h"
#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::store {

// Written inside a temporary store directory, by its builder, after it holds the
// directory's lock and before anything else; removed just before the rename into place.
inline constexpr const char* kTempMarker = ".zrec-temporary";

// The 4 bytes a zstd dictionary starts with (little-endian 0xEC30A437).
inline constexpr unsigned char kDictMagic[4] = {0x37, 0xA4, 0x30, 0xEC};

// Removes, in `parent`, every directory named `prefix` + 6 characters that provably is
// an abandoned zrec temporary store: its lock (flock) is free, it and everything in it
// belong to this process's user, it holds the marker, and nothing but regular store
// files (meta.zr, data_N.zr, dict.zr) besides. An empty directory of this user without
// the marker (a build killed between mkdtemp and its marker) is removed once it is over a
// minute old, since a starting build looks the same. Anything else of that name is left
// in place, with a warning to `warn` (zrec/context.h) saying why.
//
// `rules` widen this for temporaries that outlive their builder's lock (a join's, which
// steps in other processes fill: zrec/join.h): `extra_file` names more files such a
// directory may hold, and one for which `in_use` is true is left alone, silently. With
// `unmarked_ours`, one without the marker is removed too, empty or not and whatever its
// age: for callers holding a lock every maker of such directories holds while it makes
// them (a root's streams: remove_abandoned_stream_temps), where none can be starting.
// With `root`, the directory may be a root's temporary (build_root: recompress, concat
// of roots): besides its marker it may hold the root's own files (zrec-root, its
// temporaries, zrec-card.json) and stream directories of store files only.
struct TempStoreRules {
  std::function<bool(const std::string& name)> extra_file;
  std::function<bool(const std::string& dir)> in_use;
  bool unmarked_ours = false;
  bool root = false;
};
void remove_abandoned_temp_stores(const std::string& parent, const std::string& prefix, const WarningSink& warn,
                                  const TempStoreRules& rules = {});

// Removes, in `parent`, every file named `prefix` + 6 characters that provably is an
// abandoned zrec temporary file: a regular file with one link, this user's, unlocked,
// starting with `magic` (or empty and over a minute old: a writer killed before its
// first byte), which the warnings call `what` (a dictionary's, a join plan's: written
// under a temporary name before its rename). Anything else is left, with a warning.
void remove_abandoned_temp_files(const std::string& parent, const std::string& prefix, std::string_view magic,
                                 const char* what, const WarningSink& warn);

// A new file made from the mkstemp template `tmpl` (its XXXXXX filled in, in place)
// holding `bytes`: locked (flock, blocking: a cleanup or a writer of stale temporaries
// may hold it for the moment it takes to look at it, and leaves one this young alone),
// mode 0644 and synced, before the caller links or renames it into place. A failed
// creation says "CANNOT_CREATE 'WHERE'"; on any failure no file is left.
Result<io::File> write_locked_temp(std::string& tmpl, std::string_view bytes, const char* cannot_create,
                                   const std::string& where);

// Writes `bytes` to `path` whole or not at all: into "NAME.tmp-XXXXXX" next to it (NAME
// cut to fit NAME_MAX; abandoned ones, which start with `magic`, are removed first,
// called `what` in warnings), locked before its first byte so that no cleanup takes it,
// mode 0644, synced, then renamed to `path`: over it when `replace`, else only if
// nothing is there (kAlreadyExists), and the directory synced (a failure there says that
// `path` was written: sync_parent). On any earlier failure nothing is left at either
// name. `bytes` must start with `magic`.
Status write_file_whole(const std::string& path, std::string_view bytes, std::string_view magic, const char* what,
                        bool replace, const WarningSink& warn);

}  // namespace zrec::store
