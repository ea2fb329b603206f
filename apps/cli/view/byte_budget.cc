// ByteBudget (see byte_budget.h).
#include "cli/view/byte_budget.h"

namespace zrec::cli::view {

ByteBudget::Hold ByteBudget::reserve(uint64_t bytes) {
  std::unique_lock<std::mutex> lock(mutex_);
  freed_.wait(lock, [&] { return used_ == 0 || used_ + bytes <= capacity_; });
  used_ += bytes;
  return Hold(this, bytes);
}

ByteBudget::Hold::~Hold() {
  if (budget_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(budget_->mutex_);
    budget_->used_ -= bytes_;
  }
  budget_->freed_.notify_all();
}

}  // namespace zrec::cli::view
