#include "cli/formats/record_order.h"

namespace zrec::cli {

Result<RecordOrder> RecordOrder::of(const SelectionIndex& selection, const OrderOptions& options) {
  const uint64_t selected = selection.total();
  if (options.sample && *options.sample > 0 && selected == 0)
    return invalid_argument(options.option + ": the selection is empty");
  if (options.sample && options.distinct && *options.sample > selected)
    return invalid_argument(options.option + " " + std::to_string(*options.sample) +
                            " --distinct: the selection holds only " + std::to_string(selected) + " " + options.unit);
  return RecordOrder(selection, options, options.sample ? *options.sample : selected);
}

uint64_t RecordOrder::id_at(uint64_t i) const {
  if (options_.sample && !options_.distinct) return selection_->at(sample_index(options_.seed, i, selection_->total()));
  if (options_.sample || options_.shuffle) return selection_->at(permutation_.at(i));
  return selection_->at(i);
}

}  // namespace zrec::cli
