// Roots of named streams (docs/format.md §12, a zrec extension): a directory whose
// subdirectories are stores, one per stream, where record i of every stream belongs to
// sample i. `zrec append-tar` marks each root it builds with the file ROOT/zrec-root,
// which names the streams and the committed sample count. A writer publishes every
// stream first and commits the root after (two phases, each atomic and durable), so
// after a crash the streams hold at least the committed count, and records past it are
// those of a run that never committed: the next writer cuts back to the count, which
// the marker records exactly. A directory without the marker is not a root, and no
// writer cuts anything in it.
//
// The marker is also the root's lock: a writer holds an exclusive flock on it (as a
// store's writer does on meta.zr) before it locks, reads or changes any stream. The
// writer's protocol is zrec::DatasetWriter's (zrec/dataset.h); this header has what
// readers need.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zrec/status.h"

namespace zrec {

// The marker's file name, in the root directory.
inline constexpr const char* kRootMarkerFile = "zrec-root";

// What a marker records.
struct RootState {
  uint64_t length = 0;               // samples committed: every stream holds at least this many records
  std::vector<std::string> streams;  // the streams' names (subdirectories), sorted bytewise, distinct

  bool operator==(const RootState&) const = default;
};

// The marker's bytes for `state` (docs/format.md §12): "zrec-root 1", "length N", then
// one "stream NAME" line per stream, each line ending in '\n'; in names, backslash,
// newline and CR are written \\, \n and \r. kInvalidArgument for a name the marker
// cannot hold (empty, ".", "..", with '/' or NUL; unsorted or repeated).
Result<std::string> encode_root_marker(const RootState& state);
// Parses marker bytes; kMalformed naming `path` and the rule broken.
Result<RootState> decode_root_marker(const std::string& bytes, const std::string& path);

// Reads the marker of `root` without locking it: nullopt when there is none (the
// directory is not a root), kMalformed when it breaks a rule. The marker is replaced by
// rename(2), so an unlocked read sees one whole committed state.
Result<std::optional<RootState>> read_root_marker(const std::string& root);

// Why `name` cannot be a stream of `root` as it lies on disk, or kOk: a root's streams are
// directories inside it. A symbolic link (a stream shared with another root) is refused,
// since a writer's recovery cuts its streams back to the root's committed count and would
// cut the store it points to; so is anything but a directory. kInvalidArgument naming both.
Status check_root_stream(const std::string& root, const std::string& name);

}  // namespace zrec
