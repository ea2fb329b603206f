// The walks of `zrec diff` (see diff_walk.h).
#include "cli/diff/diff_walk.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "cli/diff/entry_sort.h"
#include "cli/diff/sample_entries.h"
#include "cli/formats/printable.h"

namespace zrec::cli {

namespace {

// The hashes of records [first, first + count) of every compared stream of `side`.
Result<std::vector<std::vector<RecordHash>>> chunk_hashes(const DiffSide& side, uint64_t first, uint64_t count,
                                                          const WalkOptions& o) {
  std::vector<std::vector<RecordHash>> out;
  for (const std::string& name : o.streams) {
    ZREC_ASSIGN_OR_RETURN(auto hashes, record_hashes(*side.find(name), first, count, o.window_bytes, o.control));
    out.push_back(std::move(hashes));
  }
  return out;
}

// A side's entries in key order, refusing a key met twice.
class KeyedEntries {
 public:
  KeyedEntries(const DiffSide& side, const std::string& key_stream, EntrySorter& sorter, size_t width)
      : side_(side), key_stream_(key_stream), sorter_(sorter), current_(width), last_(width) {}

  // Moves to the next entry; false at the end.
  Result<bool> advance() {
    ZREC_ASSIGN_OR_RETURN(const uint8_t* e, sorter_.next());
    if (e == nullptr) {
      at_end_ = true;
      return false;
    }
    if (have_last_ && std::memcmp(e, last_.data(), kEntryHashBytes) == 0)
      return duplicate(entry_id(last_.data()), entry_id(e));
    std::memcpy(current_.data(), e, current_.size());
    last_ = current_;
    have_last_ = true;
    return true;
  }
  bool at_end() const { return at_end_; }
  const uint8_t* entry() const { return current_.data(); }
  uint64_t id() const { return entry_id(current_.data()); }

 private:
  Status duplicate(uint64_t first, uint64_t second) {
    Result<std::string> key = record_payload(*side_.find(key_stream_), first);
    const std::string shown = key.is_ok() ? "'" + printable(key.value()) + "'" : "of sample " + std::to_string(first);
    return invalid_argument("'" + redact_url(side_.path) + "': key " + shown + " is held by samples " +
                            std::to_string(first) + " and " + std::to_string(second) +
                            ": --by-key needs each key once");
  }

  const DiffSide& side_;
  const std::string& key_stream_;
  EntrySorter& sorter_;
  std::vector<uint8_t> current_, last_;
  bool have_last_ = false, at_end_ = false;
};

// The compared streams whose hashes differ between two entries of one key.
std::vector<std::string> differing_streams(const uint8_t* a, const uint8_t* b, const WalkOptions& o) {
  std::vector<std::string> out;
  for (size_t s = 0; s < o.streams.size(); ++s)
    if (std::memcmp(entry_stream_hash(a, s), entry_stream_hash(b, s), kEntryHashBytes) != 0)
      out.push_back(o.streams[s]);
  return out;
}

}  // namespace

Status walk_by_position(const DiffSide& a, const DiffSide& b, ChangeLog& log, const WalkOptions& o) {
  const uint64_t both = std::min(a.length, b.length);
  for (uint64_t first = 0; first < both; first += o.chunk) {
    const uint64_t count = std::min(o.chunk, both - first);
    ZREC_ASSIGN_OR_RETURN(auto ha, chunk_hashes(a, first, count, o));
    ZREC_ASSIGN_OR_RETURN(auto hb, chunk_hashes(b, first, count, o));
    for (uint64_t k = 0; k < count; ++k) {
      Change c{Change::Kind::kChanged, first + k, first + k, {}};
      for (size_t s = 0; s < o.streams.size(); ++s)
        if (ha[s][k] != hb[s][k]) c.streams.push_back(o.streams[s]);
      if (c.streams.empty()) {
        log.unchanged(1);
      } else {
        log.add(std::move(c));
      }
    }
  }
  for (uint64_t id = both; id < a.length; ++id) log.add({Change::Kind::kRemoved, id, 0, {}});
  for (uint64_t id = both; id < b.length; ++id) log.add({Change::Kind::kAdded, 0, id, {}});
  return o.control.check();
}

Status walk_by_key(const DiffSide& a, const DiffSide& b, const std::string& key_stream, ChangeLog& log,
                   const WalkOptions& o) {
  const size_t width = entry_width(o.streams.size());
  ZREC_ASSIGN_OR_RETURN(std::unique_ptr<ScratchDir> scratch, ScratchDir::make(o.temp_dir, "zrec-diff-"));
  EntrySorter sa(*scratch, width, o.run_bytes), sb(*scratch, width, o.run_bytes);
  ZREC_RETURN_IF_ERROR(feed_entries(a, key_stream, sa, o));
  ZREC_RETURN_IF_ERROR(feed_entries(b, key_stream, sb, o));
  KeyedEntries ea(a, key_stream, sa, width), eb(b, key_stream, sb, width);
  ZREC_RETURN_IF_ERROR(ea.advance().status());
  ZREC_RETURN_IF_ERROR(eb.advance().status());
  while (!ea.at_end() || !eb.at_end()) {
    const int cmp = ea.at_end() ? 1 : eb.at_end() ? -1 : std::memcmp(ea.entry(), eb.entry(), kEntryHashBytes);
    if (cmp < 0) {
      log.add({Change::Kind::kRemoved, ea.id(), 0, {}});
      ZREC_RETURN_IF_ERROR(ea.advance().status());
    } else if (cmp > 0) {
      log.add({Change::Kind::kAdded, 0, eb.id(), {}});
      ZREC_RETURN_IF_ERROR(eb.advance().status());
    } else {
      std::vector<std::string> streams = differing_streams(ea.entry(), eb.entry(), o);
      if (streams.empty()) {
        log.unchanged(1);
      } else {
        log.add({Change::Kind::kChanged, ea.id(), eb.id(), std::move(streams)});
      }
      ZREC_RETURN_IF_ERROR(ea.advance().status());
      ZREC_RETURN_IF_ERROR(eb.advance().status());
    }
  }
  return o.control.check();
}

}  // namespace zrec::cli
