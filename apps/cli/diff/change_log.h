// What `zrec diff` found, gathered as the comparison walks: counts per kind and per
// stream, the first changes to show (the lowest IDs, whatever order they come in: a
// by-key walk meets samples in key-hash order), and, for --json only, every changed
// ID, folded into ranges at the end (8 bytes a change until then).
#pragma once

#include <cstdint>
#include <map>
#include <queue>
#include <string>
#include <vector>

namespace zrec::cli {

// One difference: a sample only in A (removed), only in B (added), or in both with
// different content in some streams (changed).
struct Change {
  enum class Kind { kRemoved, kAdded, kChanged } kind = Kind::kChanged;
  uint64_t a = 0, b = 0;             // its ID in A (removed, changed) and in B (added, changed)
  std::vector<std::string> streams;  // changed: the streams whose records differ, by name

  // The ID it is ordered and shown by: A's, or B's for an added sample.
  uint64_t order_id() const { return kind == Kind::kAdded ? b : a; }
  bool operator<(const Change& o) const { return order_id() < o.order_id(); }
};

// [start, stop) of IDs, as a Python slice.
struct IdRange {
  uint64_t start = 0, stop = 0;
};

class ChangeLog {
 public:
  ChangeLog(size_t max_shown, bool keep_ids) : max_shown_(max_shown), keep_ids_(keep_ids) {}

  void add(Change change);
  void unchanged(uint64_t count) { unchanged_ += count; }

  uint64_t removed() const { return removed_; }
  uint64_t added() const { return added_; }
  uint64_t changed() const { return changed_; }
  uint64_t unchanged() const { return unchanged_; }
  uint64_t total() const { return removed_ + added_ + changed_; }
  // Changed samples per stream, by name.
  const std::map<std::string, uint64_t>& changed_by_stream() const { return by_stream_; }

  // The first max_shown changes by order_id(), ascending.
  std::vector<Change> shown() const;

  // With keep_ids: the IDs of each kind as ranges (removed: A's IDs; added: B's;
  // changed and per stream: A's). Sorts what it kept; call once, at the end.
  std::vector<IdRange> removed_ranges() { return ranges(removed_ids_); }
  std::vector<IdRange> added_ranges() { return ranges(added_ids_); }
  std::vector<IdRange> changed_ranges() { return ranges(changed_ids_); }
  std::vector<IdRange> stream_ranges(const std::string& name) { return ranges(stream_ids_[name]); }

 private:
  static std::vector<IdRange> ranges(std::vector<uint64_t>& ids);

  const size_t max_shown_;
  const bool keep_ids_;
  uint64_t removed_ = 0, added_ = 0, changed_ = 0, unchanged_ = 0;
  std::map<std::string, uint64_t> by_stream_;
  std::priority_queue<Change> shown_;  // a max-heap of the lowest max_shown_
  std::vector<uint64_t> removed_ids_, added_ids_, changed_ids_;
  std::map<std::string, std::vector<uint64_t>> stream_ids_;
};

}  // namespace zrec::cli
