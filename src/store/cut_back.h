// Cutting a published store back to its first records: the writer-side recovery of
// named streams that a kill left at unequal lengths (append-tar publishes its streams
// one after another; see docs/import.md). A zrec extension of the format's
// publication rules: the cut is itself a publication, of a smaller `length` with each
// shard's tail at the end of the last record it still holds.
#pragma once

#include <cstdint>
#include <string>

#include "zrec/context.h"
#include "zrec/status.h"

namespace zrec {

// Publishes the store at `path` with only its first `length` records (which must be
// <= its published length; equal is a no-op). Takes the store's exclusive lock (kBusy
// when held, unless ctx.wait). Order, so that a crash at any point leaves a valid store:
// the new static page is written and synced first (the publication; records past
// `length` become leftovers readers ignore), then the data files and the table are
// truncated to the new tails and length. The cut records are gone for good.
Status cut_back_store(const std::string& path, uint64_t length, const Context& ctx = {});

}  // namespace zrec
