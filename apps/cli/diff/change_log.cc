// The findings of `zrec diff` (see change_log.h).
#include "cli/diff/change_log.h"

#include <algorithm>

namespace zrec::cli {

void ChangeLog::add(Change change) {
  switch (change.kind) {
    case Change::Kind::kRemoved:
      ++removed_;
      if (keep_ids_) removed_ids_.push_back(change.a);
      break;
    case Change::Kind::kAdded:
      ++added_;
      if (keep_ids_) added_ids_.push_back(change.b);
      break;
    case Change::Kind::kChanged:
      ++changed_;
      if (keep_ids_) changed_ids_.push_back(change.a);
      for (const std::string& name : change.streams) {
        ++by_stream_[name];
        if (keep_ids_) stream_ids_[name].push_back(change.a);
      }
      break;
  }
  if (max_shown_ == 0) return;
  if (shown_.size() < max_shown_) {
    shown_.push(std::move(change));
  } else if (change < shown_.top()) {
    shown_.pop();
    shown_.push(std::move(change));
  }
}

std::vector<Change> ChangeLog::shown() const {
  auto heap = shown_;
  std::vector<Change> out;
  for (; !heap.empty(); heap.pop()) out.push_back(heap.top());
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<IdRange> ChangeLog::ranges(std::vector<uint64_t>& ids) {
  std::sort(ids.begin(), ids.end());
  std::vector<IdRange> out;
  for (uint64_t id : ids) {
    if (!out.empty() && out.back().stop == id) {
      ++out.back().stop;
    } else {
      out.push_back({id, id + 1});
    }
  }
  return out;
}

}  // namespace zrec::cli
