// Schema rules (docs/format.md §4, §5, §10) and descriptions.
#include "zrec/schema.h"

#include "format/layout.h"

namespace zrec {

Status Schema::validate() const {
  if (item_shape) {
    if (item_shape->size() != ndim)
      return invalid_argument("item_shape has " + std::to_string(item_shape->size()) + " entries but ndim is " +
                              std::to_string(ndim));
    for (uint64_t d : *item_shape)
      if (d < 1) return invalid_argument("item_shape entries must be >= 1");
    auto width = checked_volume(*item_shape, dtype.itemsize);
    if (!width || *width > format::kMaxRecordBytes)
      return invalid_argument("a Dense record of " + describe() + " would be 2 GiB or larger");
  } else {
    if (ndim < 1) return invalid_argument("a Ragged store needs ndim >= 1");
    if (shape_prefix_bytes() + dtype.itemsize > format::kMaxRecordBytes)
      return invalid_argument("ndim " + std::to_string(ndim) + " is too large");
  }
  return Status::ok();
}

uint64_t Schema::dense_width() const { return *checked_volume(*item_shape, dtype.itemsize); }

std::string Schema::describe() const {
  if (!item_shape) return "ragged " + dtype.str() + " ndim=" + std::to_string(ndim);
  std::string s = "dense " + dtype.str() + " (";
  for (size_t i = 0; i < item_shape->size(); ++i) {
    if (i) s += ", ";
    s += std::to_string((*item_shape)[i]);
  }
  if (item_shape->size() == 1) s += ",";
  return s + ")";
}

}  // namespace zrec
