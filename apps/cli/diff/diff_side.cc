// Opening a side of `zrec diff` (see diff_side.h).
#include "cli/diff/diff_side.h"

#include <algorithm>
#include <optional>

#include "zrec/dataset.h"

#include "cli/formats/printable.h"

namespace zrec::cli {

Store* DiffSide::find(const std::string& name) const {
  for (const DiffStream& s : streams)
    if (s.name == name) return s.store.get();
  return nullptr;
}

Result<DiffSide> open_diff_side(const std::string& path, const Context& ctx) {
  DiffSide side;
  side.path = path;
  const std::string shown = redact_url(path);
  ZREC_ASSIGN_OR_RETURN(const Dataset ds, Dataset::open(path, {}, ctx));
  if (!ds.marked()) {
    // A lone store. A directory of stores without the marker is no dataset: its
    // stores' records need not belong together, so it is refused rather than guessed.
    if (!is_store_dir(path, ctx))
      return not_found("'" + shown + "' is neither a store (no meta.zr) nor a root (no zrec-root marker)");
    ZREC_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::open(path, {}, ctx));
    side.length = store->length();
    side.streams.push_back({kStoreStream, std::move(store)});
    return side;
  }
  side.root = true;
  side.length = ds.length();
  for (const std::string& name : ds.streams()) {
    ZREC_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, ds.open_stream(name));
    // Records past the committed count are a run that never committed: not the root's.
    if (store->length() < side.length)
      return malformed("root '" + shown + "': stream '" + name + "' holds " + std::to_string(store->length()) +
                       " records, fewer than the " + std::to_string(side.length) + " samples its marker commits");
    side.streams.push_back({name, std::move(store)});
  }
  return side;  // the marker lists its streams sorted
}

Result<std::vector<RecordHash>> record_hashes(Store& store, uint64_t first, uint64_t count, uint64_t window_bytes,
                                              const Control& control) {
  std::vector<RecordHash> out;
  out.reserve(count);
  DigestOptions options;
  options.window_bytes = window_bytes;
  options.count = count;
  options.id_at = [first](uint64_t p) { return first + p; };
  options.per_record = [&out](uint64_t, const RecordHash& h) {
    out.push_back(h);
    return Status::ok();
  };
  ZREC_RETURN_IF_ERROR(digest_store(store, options, Context{.control = control}).status());
  return out;
}

Result<std::string> record_payload(Store& store, uint64_t id) {
  std::string out;
  const uint64_t ids[] = {id};
  const uint64_t prefix = store.schema().shape_prefix_bytes();
  ZREC_RETURN_IF_ERROR(store.scan(ids, kDefaultWindowBytes, [&](const Window& w) -> Status {
    const uint64_t begin = std::min<uint64_t>(w.offsets[0] + prefix, w.offsets[1]);
    out.assign(reinterpret_cast<const char*>(w.data) + begin, w.offsets[1] - begin);
    return Status::ok();
  }));
  return out;
}

std::string sample_key_words(const DiffSide& side, uint64_t id) {
  Store* keys = side.find(kKeyStream);
  if (keys == nullptr) return "";
  Result<std::string> key = record_payload(*keys, id);
  return key.is_ok() ? " key '" + printable(key.value()) + "'" : "";
}

}  // namespace zrec::cli
