// plan_array: see npy_plan.h.
#include "cli/import/npy_plan.h"

#include <algorithm>

namespace zrec::cli {

Result<ArrayPlan> plan_array(const NpyHeader& h, const Schema& schema, bool split_axis0, const std::string& where) {
  auto bad = [&](const std::string& rule) { return invalid_argument(where + ": " + rule); };
  if (h.dtype != schema.dtype)
    return bad("dtype '" + h.dtype.str() + "' does not match the store's '" + schema.dtype.str() + "'");
  // Zero-element arrays are refused, even an empty batch (0, *item_shape).
  ZREC_RETURN_IF_ERROR(check_npy_array(h, where));
  if (schema.is_dense()) {
    // (B, *item_shape): axis 0 is the batch.
    const auto& item = *schema.item_shape;
    if (h.shape.size() != item.size() + 1 || !std::equal(item.begin(), item.end(), h.shape.begin() + 1)) {
      std::string want = "(B,";
      for (uint64_t d : item) want += " " + std::to_string(d) + ",";
      if (!item.empty()) want.pop_back();
      return bad("shape " + shape_to_string(h.shape) + " is not " + want + ") for records of " + schema.describe());
    }
  } else {
    const size_t expect_rank = schema.ndim + (split_axis0 ? 1 : 0);
    if (h.shape.size() != expect_rank)
      return bad("array has " + std::to_string(h.shape.size()) + " dims; records of this store have " +
                 std::to_string(schema.ndim) + (split_axis0 ? " (plus axis 0 with --split-axis0)" : ""));
  }
  ZREC_ASSIGN_OR_RETURN(NpyRecords r, npy_records(h, !schema.is_dense(), split_axis0, where));
  ArrayPlan plan;
  plan.records = r.records;
  plan.record_bytes = r.record_bytes;
  if (!schema.is_dense()) plan.dims = std::move(r.item);
  return plan;
}

}  // namespace zrec::cli
