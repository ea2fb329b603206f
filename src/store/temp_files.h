// Temporaries next to an output (".NAME.zrec-tmp-XXXXXX" store directories, "F.tmp-XXXXXX"
// dictionary files): how zrec marks them as its own, and how the next run removes those
// a killed run left behind without ever deleting what zrec did not create.
#pragma once

#include <string>
#include <string_view>

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
// in place, with a warning (zrec/warning.h) saying why.
void remove_abandoned_temp_stores(const std::string& parent, const std::string& prefix);

// Removes, in `parent`, every file named `prefix` + 6 characters that provably is an
// abandoned zrec dictionary temporary: a regular file with one link, this user's,
// unlocked, starting with the zstd dictionary magic (or empty and over a minute old: a
// train-dict killed before its first byte). Anything else is left, with a warning.
void remove_abandoned_temp_dicts(const std::string& parent, const std::string& prefix);

// The same for temporary files that start with `magic` (a join plan's, written under a
// temporary name before its rename: zrec/join.h).
void remove_abandoned_temp_files(const std::string& parent, const std::string& prefix, std::string_view magic);

}  // namespace zrec::store
