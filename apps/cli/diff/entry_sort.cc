// The external sort of `zrec diff --by-key` (see entry_sort.h).
#include "cli/diff/entry_sort.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>

namespace zrec::cli {

namespace {
constexpr size_t kRunReadBufferBytes = 16 << 10;  // per run: 340 runs cost 5 MiB
}  // namespace

Result<std::unique_ptr<ScratchDir>> ScratchDir::make(const std::string& parent, const std::string& prefix) {
  std::string base = parent;
  if (base.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    base = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string templ = base + "/" + prefix + "XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    return io_error("cannot make a scratch directory in '" + base + "': " + std::strerror(errno));
  return std::unique_ptr<ScratchDir>(new ScratchDir(templ));
}

ScratchDir::~ScratchDir() {
  // Everything in it is ours (mkdtemp made it): sorted runs, and diff's keys stores.
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string ScratchDir::new_file() {
  files_.push_back(path_ + "/run-" + std::to_string(files_.size()));
  return files_.back();
}

EntrySorter::EntrySorter(ScratchDir& scratch, size_t width, size_t run_bytes)
    : scratch_(scratch), width_(width), run_entries_(std::max<size_t>(1, run_bytes / (width + sizeof(uint32_t)))) {}

EntrySorter::~EntrySorter() {
  for (std::FILE* f : files_)
    if (f != nullptr) std::fclose(f);
}

Status EntrySorter::add(const uint8_t* entry) {
  if (buffer_.empty()) buffer_.reserve(run_entries_ * width_);  // no doubling past the run's size
  buffer_.insert(buffer_.end(), entry, entry + width_);
  if (buffer_.size() / width_ >= run_entries_) return spill();
  return Status::ok();
}

// Sorts the gathered run's entries by an index (moving 4 bytes, not `width_`); the
// order is left in order_.
static void sort_entry_run(const std::vector<uint8_t>& buffer, size_t width, std::vector<uint32_t>& order) {
  order.resize(buffer.size() / width);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return std::memcmp(&buffer[size_t{x} * width], &buffer[size_t{y} * width], width) < 0;
  });
}

Status EntrySorter::spill() {
  sort_entry_run(buffer_, width_, order_);
  const std::string path = scratch_.new_file();
  std::FILE* f = std::fopen(path.c_str(), "w+b");
  if (f == nullptr) return io_error("cannot create '" + path + "': " + std::strerror(errno));
  files_.push_back(f);
  for (uint32_t i : order_)
    if (std::fwrite(&buffer_[size_t{i} * width_], 1, width_, f) != width_)
      return io_error("cannot write '" + path + "': " + std::strerror(errno));
  if (std::fflush(f) != 0) return io_error("cannot write '" + path + "': " + std::strerror(errno));
  buffer_.clear();
  order_.clear();
  return Status::ok();
}

Status EntrySorter::finish() {
  if (files_.empty()) {  // one run: served from memory
    sort_entry_run(buffer_, width_, order_);
    return Status::ok();
  }
  if (!buffer_.empty()) ZREC_RETURN_IF_ERROR(spill());
  std::vector<uint8_t>().swap(buffer_);
  std::vector<uint32_t>().swap(order_);
  heads_.resize(files_.size() * width_);
  live_.assign(files_.size(), false);
  for (size_t r = 0; r < files_.size(); ++r) {
    std::rewind(files_[r]);
    std::setvbuf(files_[r], nullptr, _IOFBF, kRunReadBufferBytes);
    ZREC_RETURN_IF_ERROR(refill(r));
    if (live_[r]) heap_.push_back(r);
  }
  const auto greater = [this](size_t x, size_t y) {
    return std::memcmp(&heads_[x * width_], &heads_[y * width_], width_) > 0;
  };
  std::make_heap(heap_.begin(), heap_.end(), greater);
  current_.resize(width_);
  return Status::ok();
}

Status EntrySorter::refill(size_t run) {
  const size_t got = std::fread(&heads_[run * width_], 1, width_, files_[run]);
  if (got == width_) {
    live_[run] = true;
    return Status::ok();
  }
  if (std::ferror(files_[run])) return io_error(std::string("cannot read a scratch run: ") + std::strerror(errno));
  live_[run] = false;
  return Status::ok();
}

Result<const uint8_t*> EntrySorter::next() {
  if (files_.empty()) {
    if (served_ == order_.size()) return static_cast<const uint8_t*>(nullptr);
    return &buffer_[size_t{order_[served_++]} * width_];
  }
  const auto greater = [this](size_t x, size_t y) {
    return std::memcmp(&heads_[x * width_], &heads_[y * width_], width_) > 0;
  };
  if (heap_.empty()) return static_cast<const uint8_t*>(nullptr);
  std::pop_heap(heap_.begin(), heap_.end(), greater);
  const size_t run = heap_.back();
  std::memcpy(current_.data(), &heads_[run * width_], width_);
  ZREC_RETURN_IF_ERROR(refill(run));
  if (live_[run]) {
    std::push_heap(heap_.begin(), heap_.end(), greater);
  } else {
    heap_.pop_back();
  }
  return static_cast<const uint8_t*>(current_.data());
}

}  // namespace zrec::cli
