// Grouping samples by one stream's content (see duplicate_groups.h).
#include "cli/diff/duplicate_groups.h"

#include <cstring>
#include <memory>

#include "cli/diff/entry_sort.h"
#include "cli/diff/sample_entries.h"

namespace zrec::cli {

namespace {

// The members of one group as their entries, and what the group says of them.
class GroupBuilder {
 public:
  GroupBuilder(const WalkOptions& o) : o_(o), width_(entry_width(o.streams.size())) {}

  bool empty() const { return count_ == 0; }
  // True when `entry` leads with the hash of the group being gathered.
  bool same_lead(const uint8_t* entry) const {
    return count_ > 0 && std::memcmp(entry, first_.data(), kEntryHashBytes) == 0;
  }
  void add(const uint8_t* entry) {
    if (count_ == 0) {
      first_.assign(entry, entry + width_);
      differs_.assign(o_.streams.size(), false);
      ids_.clear();
    } else {
      for (size_t s = 0; s < o_.streams.size(); ++s)
        if (std::memcmp(entry_stream_hash(entry, s), entry_stream_hash(first_.data(), s), kEntryHashBytes) != 0)
          differs_[s] = true;
    }
    ids_.push_back(entry_id(entry));
    ++count_;
  }
  // Hands a gathered group of two or more on and starts over.
  Status close(const std::function<Status(DuplicateGroup&&)>& fn) {
    const uint64_t count = count_;
    count_ = 0;
    if (count < 2) return Status::ok();
    DuplicateGroup g;
    g.ids = std::move(ids_);
    for (size_t s = 0; s < o_.streams.size(); ++s)
      if (differs_[s]) g.differ.push_back(o_.streams[s]);
    return fn(std::move(g));
  }

 private:
  const WalkOptions& o_;
  const size_t width_;
  std::vector<uint8_t> first_;
  std::vector<bool> differs_;
  std::vector<uint64_t> ids_;
  uint64_t count_ = 0;
};

}  // namespace

Status find_duplicates(const DiffSide& side, const std::string& by, const WalkOptions& o,
                       const std::function<Status(DuplicateGroup&&)>& group) {
  ZREC_ASSIGN_OR_RETURN(std::unique_ptr<ScratchDir> scratch, ScratchDir::make(o.temp_dir, "zrec-duplicates-"));
  EntrySorter sorter(*scratch, entry_width(o.streams.size()), o.run_bytes);
  ZREC_RETURN_IF_ERROR(feed_entries(side, by, sorter, o));
  GroupBuilder builder(o);
  uint64_t seen = 0;
  for (;;) {
    ZREC_ASSIGN_OR_RETURN(const uint8_t* e, sorter.next());
    if (e == nullptr) break;
    if ((++seen & 0xffff) == 0) ZREC_RETURN_IF_ERROR(o.control.check());
    if (!builder.empty() && !builder.same_lead(e)) ZREC_RETURN_IF_ERROR(builder.close(group));
    builder.add(e);
  }
  ZREC_RETURN_IF_ERROR(builder.close(group));
  return o.control.check();
}

}  // namespace zrec::cli
