// `zrec digest ROOT`: the digests of a root's committed streams and of the dataset, or
// one digest per sample (include/zrec/digest.h has the definitions).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "zrec/digest.h"
#include "zrec/status.h"

#include "cli/roots/root_reader.h"

namespace zrec::cli {

// Which samples to hash: `count` of them, the one at position p being sample id_at(p);
// all committed samples when id_at is null.
struct SampleSelection {
  uint64_t count = 0;
  std::function<uint64_t(uint64_t)> id_at = nullptr;
};

// Each stream's digest over the selected samples, in the marker's (name) order.
Result<std::vector<NamedHash>> digest_root_streams(OpenedRoot& root, const SampleSelection& selection,
                                                   uint64_t window_bytes);

// Calls `per_sample` with each selected sample's ID and digest, in selection order. The
// samples are hashed a chunk at a time, every stream's records of the chunk, so memory
// holds 32 bytes per stream and sample of one chunk only.
Status digest_root_samples(OpenedRoot& root, const SampleSelection& selection, uint64_t window_bytes,
                           const std::function<Status(uint64_t id, const RecordHash& hash)>& per_sample);

}  // namespace zrec::cli
