// `zrec sync` to a local directory (from a URL, or from another local path): the copy is
// built in a hidden sibling of DST, ".NAME.zrec-sync", checked whole (verify's structure
// check) and renamed into place in one step, so DST is either absent (or the old copy)
// or the whole new one. A run that fails or is killed leaves the sibling with its
// manifest (".zrec-sync-manifest": a line "SIZE REL" per file written whole and synced);
// the next run of the same DST keeps each listed file whose source still has that size
// and fetches only the rest.
#pragma once

#include <cstdint>
#include <string>

#include "zrec/status.h"

#include "cli/app/command.h"
#include "cli/sync/sync_source.h"

namespace zrec::cli {

struct LocalCopyCounts {
  uint64_t files = 0;    // files fetched or copied
  uint64_t skipped = 0;  // files a killed run had written whole (kept)
  uint64_t bytes = 0;    // bytes written
};

// The hidden sibling `dst` is built in.
std::string sync_temp_sibling(const std::string& dst);

// Copies `src` to `dst`. An existing DST is refused unless `force`; then it is replaced
// by one rename (RENAME_EXCHANGE) and the old copy removed.
Status copy_to_local(const SyncSource& src, const std::string& dst, bool force, const GlobalOptions& global,
                     LocalCopyCounts& counts);

}  // namespace zrec::cli
