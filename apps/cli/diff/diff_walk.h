// The two walks of `zrec diff`, each filling a ChangeLog from two opened sides.
//
// By position: sample i of A against sample i of B, stream by stream, a chunk of IDs at
// a time: memory is a chunk's hashes, whatever the length. Samples past the shorter
// side are removed (A longer) or added (B longer); a sample dropped from the middle of
// B shows as every later sample changed (the walk does not look for shifts).
//
// By key: each side's samples become entries (hash of the key record, ID, a 16-byte
// hash per compared stream), sorted externally (entry_sort.h) and merged by key: memory
// is the sort's run buffer, disk some 24 + 16 * streams bytes a sample per side. A key
// held by two samples of one side is an error naming both.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/status.h"

#include "cli/diff/change_log.h"
#include "cli/diff/diff_side.h"

namespace zrec::cli {

struct WalkOptions {
  std::vector<std::string> streams;  // the streams both sides hold that are compared, sorted
  uint64_t window_bytes = 8 << 20;   // each read's window
  uint64_t chunk = 65536;            // samples hashed per step
  std::string temp_dir;              // --by-key: where runs spill ("": $TMPDIR or /tmp)
  uint64_t run_bytes = 16 << 20;     // --by-key: each side's sort buffer
  Control control;
};

Status walk_by_position(const DiffSide& a, const DiffSide& b, ChangeLog& log, const WalkOptions& options);

// Both sides must hold the stream `key_stream`.
Status walk_by_key(const DiffSide& a, const DiffSide& b, const std::string& key_stream, ChangeLog& log,
                   const WalkOptions& options);

}  // namespace zrec::cli
