// A cap on the record bytes `zrec view` holds in memory at once, across all requests, so
// that its peak memory follows this budget and not the store: a request that reads records
// first reserves their logical size and waits while other requests hold the rest. A
// reservation larger than the whole budget waits until nothing else is held, then runs
// alone.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace zrec::cli::view {

class ByteBudget {
 public:
  explicit ByteBudget(uint64_t capacity) : capacity_(capacity) {}

  // Bytes reserved until destroyed.
  class Hold {
   public:
    Hold(Hold&& other) noexcept : budget_(other.budget_), bytes_(other.bytes_) { other.budget_ = nullptr; }
    Hold& operator=(Hold&&) = delete;
    ~Hold();

   private:
    friend class ByteBudget;
    Hold(ByteBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}
    ByteBudget* budget_;
    uint64_t bytes_;
  };

  // Waits until `bytes` fit (or nothing else is held), then reserves them.
  Hold reserve(uint64_t bytes);

  uint64_t capacity() const { return capacity_; }

 private:
  const uint64_t capacity_;
  std::mutex mutex_;
  std::condition_variable freed_;
  uint64_t used_ = 0;  // guarded by mutex_
};

}  // namespace zrec::cli::view
