#include "store/remote_repeats.h"

#include <cstring>

namespace zrec::store {

void RemoteRepeats::begin_chunk(std::span<const uint64_t> ids, std::span<const RecordLoc> locs, uint64_t budget) {
  source_.assign(ids.size(), kNone);
  from_copy_.assign(ids.size(), 0);
  std::lock_guard<std::mutex> lock(mu_);
  copies_.clear();
  std::unordered_map<uint64_t, uint32_t> later;  // per ID: its positions not visited yet
  for (const uint64_t id : ids) ++later[id];
  if (later.size() == ids.size()) return;       // no ID repeats: nothing to keep
  std::unordered_map<uint64_t, size_t> keeper;  // per ID: the position whose copy is held now
  uint64_t held = 0;
  for (size_t k = 0; k < ids.size(); ++k) {
    const uint32_t after = --later[ids[k]];
    const uint64_t n = locs[k].logic_length;
    if (auto it = keeper.find(ids[k]); it != keeper.end()) {
      source_[k] = it->second;
      ++copies_[it->second].uses;
      if (after == 0) {  // its last use: the copy's bytes are free for another
        held -= n;
        keeper.erase(it);
      }
    } else if (after > 0 && held + n <= budget) {
      keeper.emplace(ids[k], k);
      copies_[k];
      held += n;
    }
  }
}

Status RemoteRepeats::take(size_t k, uint8_t* dst, uint64_t n) {
  std::unique_lock<std::mutex> lock(mu_);
  Copy& copy = copies_.at(source_[k]);
  ready_.wait(lock, [&] { return copy.ready || !copy.error.is_ok(); });
  if (!copy.error.is_ok()) return copy.error;
  std::memcpy(dst, copy.bytes.data(), n);
  used(source_[k]);
  return Status::ok();
}

void RemoteRepeats::read(size_t k, const uint8_t* bytes, uint64_t n) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = copies_.find(k); it != copies_.end()) {
    it->second.bytes.assign(bytes, bytes + n);
    it->second.ready = true;
    ready_.notify_all();
  } else if (source_[k] != kNone) {
    used(source_[k]);  // read by its keeper's claim, in the same window
  }
}

void RemoteRepeats::failed(size_t k, const Status& status) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = copies_.find(k); it != copies_.end() && !it->second.ready) {
    it->second.error = status;
    ready_.notify_all();
  }
}

void RemoteRepeats::used(size_t keeper) {
  auto it = copies_.find(keeper);
  if (it != copies_.end() && --it->second.uses == 0) copies_.erase(it);
}

}  // namespace zrec::store
