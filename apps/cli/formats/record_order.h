// The order a reader goes through a selection in: as selected, shuffled (--shuffle),
// drawn with replacement (--sample N) or without (--sample N --distinct: the first N of
// the shuffle's order). cat, the tar export and view's record pages all read through
// it, so the same options and seed give the same IDs in the same order in each
// (formats/shuffle.h: the permutation and the draws).
//
// Example:
//   ZREC_ASSIGN_OR_RETURN(const RecordOrder order, RecordOrder::of(selection, {.sample = 5, .seed = 9}));
//   for (uint64_t i = 0; i < order.total(); ++i) read(order.id_at(i));
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "zrec/status.h"

#include "cli/formats/selection.h"
#include "cli/formats/shuffle.h"

namespace zrec::cli {

struct OrderOptions {
  std::optional<uint64_t> sample = std::nullopt;  // --sample N: N draws
  bool distinct = false;                          // ... without replacement
  bool shuffle = false;                           // --shuffle: every selected record once, in a seeded order
  uint64_t seed = 0;
  std::string option = "--sample";  // how messages name the sample ("sample": view's query)
  std::string unit = "records";     // what the selection holds, in messages ("samples": a root)
};

class RecordOrder {
 public:
  // The order of `selection` (which must outlive it). A sample of an empty selection,
  // and a distinct sample larger than the selection, are refused (kInvalidArgument).
  static Result<RecordOrder> of(const SelectionIndex& selection, const OrderOptions& options);

  // IDs in the order: the sample's size, else the selection's.
  uint64_t total() const { return total_; }
  // The ID at position i (< total()).
  uint64_t id_at(uint64_t i) const;

 private:
  RecordOrder(const SelectionIndex& selection, const OrderOptions& options, uint64_t total)
      : selection_(&selection), options_(options), total_(total), permutation_(selection.total(), options.seed) {}

  const SelectionIndex* selection_;
  OrderOptions options_;
  uint64_t total_;
  KeyedPermutation permutation_;
};

}  // namespace zrec::cli
