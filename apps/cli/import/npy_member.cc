// append-tar's .npy members (see npy_member.h).
#include "cli/import/npy_member.h"

#include <string_view>

#include "zrec/format.h"

namespace zrec::cli {

namespace {
constexpr std::string_view kNpySuffix = ".npy";
}  // namespace

std::string npy_member_stream(const std::string& ext) {
  if (ext.size() <= kNpySuffix.size() || !ext.ends_with(kNpySuffix)) return {};
  return ext.substr(0, ext.size() - kNpySuffix.size());
}

Result<NpyMember> read_npy_member(TarReader& reader, const TarMember& m) {
  const std::string where = "member '" + m.path + "'";
  // The tar reader may return less than asked: the header's parts are read whole.
  uint64_t taken = 0;
  const NpyReadFull read_full = [&](void* dst, size_t n) -> Result<size_t> {
    size_t got = 0;
    while (got < n && taken < m.size) {
      ZREC_ASSIGN_OR_RETURN(const uint64_t part, reader.read(static_cast<uint8_t*>(dst) + got, n - got));
      if (part == 0) break;
      got += part;
      taken += part;
    }
    return got;
  };
  NpyMember out;
  ZREC_ASSIGN_OR_RETURN(out.header, read_npy_header(read_full, where, &out.header_bytes));
  const NpyHeader& h = out.header;
  if (out.header_bytes + h.data_bytes != m.size)
    return invalid_argument(where + " is " + std::to_string(m.size) + " bytes, but its .npy header says " +
                            std::to_string(out.header_bytes) + " + " + std::to_string(h.data_bytes) + " (an array " +
                            shape_to_string(h.shape) + " " + h.dtype.str() + ")");
  if (h.fortran_order && h.shape.size() > 1)
    return invalid_argument(where + " holds a Fortran-order array; records are C order (np.ascontiguousarray)");
  if (h.element_count == 0)
    return invalid_argument(where + " holds an array of no elements " + shape_to_string(h.shape) +
                            " (records are nonempty)");
  return out;
}

Schema npy_stream_schema(const NpyHeader& h, bool dense) {
  Schema schema;
  schema.dtype = h.dtype;
  schema.ndim = static_cast<uint32_t>(h.shape.size());
  if (dense || h.shape.empty()) schema.item_shape = h.shape;
  return schema;
}

Status check_npy_record(const NpyHeader& h, const Schema& schema, const std::string& member, const std::string& path) {
  const std::string array = "an array " + shape_to_string(h.shape) + " " + h.dtype.str();
  const std::string where =
      "member '" + member + "' holds " + array + "; stream '" + path + "' is " + schema.describe();
  if (h.dtype != schema.dtype) return invalid_argument(where + ": the dtypes differ");
  if (schema.is_dense() && h.shape != *schema.item_shape)
    return invalid_argument(where + ": a Dense stream's records all have its item shape");
  if (!schema.is_dense() && h.shape.size() != schema.ndim)
    return invalid_argument(where + ": a Ragged stream's records all have its ndim");
  const uint64_t dims_bytes = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
  if (h.data_bytes > kMaxRecordBytes - dims_bytes)
    return invalid_argument("member '" + member + "' holds " + array + " of " + std::to_string(h.data_bytes) +
                            " bytes; a record holds at most " + std::to_string(kMaxRecordBytes - dims_bytes));
  return Status::ok();
}

}  // namespace zrec::cli
