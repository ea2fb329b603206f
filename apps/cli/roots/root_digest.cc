#include "cli/roots/root_digest.h"

#include <algorithm>

#include "cli/os/interrupt.h"

namespace zrec::cli {

namespace {

// The digest options for one stream: the selected samples (or all committed ones: a
// stream may hold records past them, of a run that never committed).
DigestOptions stream_options(const OpenedRoot& root, const SampleSelection& selection, uint64_t window_bytes) {
  DigestOptions options;
  options.window_bytes = window_bytes;
  if (selection.id_at) {
    options.count = selection.count;
    options.id_at = selection.id_at;
  } else {
    options.count = root.state.length;
    options.id_at = [](uint64_t p) { return p; };
  }
  return options;
}

}  // namespace

Result<std::vector<NamedHash>> digest_root_streams(OpenedRoot& root, const SampleSelection& selection,
                                                   uint64_t window_bytes) {
  std::vector<NamedHash> digests;
  for (RootStream& s : root.streams) {
    auto digest = digest_store(*s.store, stream_options(root, selection, window_bytes), root.ctx);
    if (!digest.is_ok()) return digest.status().with_context("stream '" + s.name + "' of '" + root.path + "'");
    digests.push_back({s.name, digest.value()});
  }
  return digests;
}

Status digest_root_samples(OpenedRoot& root, const SampleSelection& selection, uint64_t window_bytes,
                           const std::function<Status(uint64_t id, const RecordHash& hash)>& per_sample) {
  constexpr uint64_t kChunk = 1 << 16;  // 2 MiB of hashes per stream at most
  const uint64_t count = selection.id_at ? selection.count : root.state.length;
  const auto id_at = [&](uint64_t p) { return selection.id_at ? selection.id_at(p) : p; };
  std::vector<std::vector<RecordHash>> hashes(root.streams.size());
  std::vector<NamedHash> sample(root.streams.size());
  for (uint64_t first = 0; first < count; first += kChunk) {
    const uint64_t n = std::min(kChunk, count - first);
    for (size_t k = 0; k < root.streams.size(); ++k) {
      DigestOptions options = stream_options(root, selection, window_bytes);
      options.count = n;
      options.id_at = [&, first](uint64_t p) { return id_at(first + p); };
      hashes[k].clear();
      options.per_record = [&, k](uint64_t, const RecordHash& h) {
        hashes[k].push_back(h);
        return Status::ok();
      };
      auto digest = digest_store(*root.streams[k].store, options, root.ctx);
      if (!digest.is_ok())
        return digest.status().with_context("stream '" + root.streams[k].name + "' of '" + root.path + "'");
    }
    for (uint64_t p = 0; p < n; ++p) {
      for (size_t k = 0; k < root.streams.size(); ++k) sample[k] = {root.streams[k].name, hashes[k][p]};
      ZREC_RETURN_IF_ERROR(per_sample(id_at(first + p), digest_sample(sample)));
    }
  }
  return Status::ok();
}

}  // namespace zrec::cli
