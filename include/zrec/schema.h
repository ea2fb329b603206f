// The store schema (docs/format.md §4): dtype, ndim and, for Dense stores, item_shape.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zrec/dtype.h"
#include "zrec/status.h"

namespace zrec {

enum class Geometry { kDense, kRagged };

struct Schema {
  DType dtype;
  uint32_t ndim = 1;
  // Present exactly for Dense stores (len == ndim, each entry >= 1); absent for Ragged.
  std::optional<std::vector<uint64_t>> item_shape;

  Geometry geometry() const { return item_shape ? Geometry::kDense : Geometry::kRagged; }
  bool is_dense() const { return item_shape.has_value(); }

  // Checks the docs/format.md rules a schema must follow (Ragged ndim >= 1, item_shape
  // entries >= 1, the Dense record width and Ragged minimum fit below 2^31, and so on).
  Status validate() const;

  // Dense: logic_length of every record, itemsize * prod(item_shape). Requires validate().
  uint64_t dense_width() const;

  // Ragged: bytes of the shape prefix, 8 * ndim.
  uint64_t shape_prefix_bytes() const { return 8ull * ndim; }

  // Human-readable one-liner: "dense <i4 (28, 28)" or "ragged |u1 ndim=3".
  std::string describe() const;

  friend bool operator==(const Schema&, const Schema&) = default;
};

// Checked product of dimensions times itemsize; nullopt on 64-bit overflow.
std::optional<uint64_t> checked_volume(std::span<const uint64_t> dims, uint64_t itemsize);

}  // namespace zrec
