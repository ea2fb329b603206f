// HDF5 datatypes as NumPy dtypes (see h5_types.h).
#include "cli/import/h5_types.h"

#include <cstring>
#include <memory>
#include <utility>

namespace zrec::cli {

namespace {

Status refuse(const std::string& where, const std::string& what) {
  return invalid_argument(where + " has " + what +
                          "; append-h5 takes integers, IEEE floats, h5py's bool, fixed-length strings, arrays of "
                          "these, and variable-length sequences of numbers");
}

std::string bytes_type(size_t size, const char* what) {
  return "a " + std::to_string(size) + "-byte " + what + " type";
}

// '<' or '>' for the type's byte order; '\0' for VAX, mixed or none.
char byte_order(hid_t type) {
  switch (H5Tget_order(type)) {
    case H5T_ORDER_LE:
      return '<';
    case H5T_ORDER_BE:
      return '>';
    default:
      return '\0';
  }
}

Result<DType> dtype_of(const std::string& text) {
  auto d = parse_dtype(text);
  if (!d.is_ok()) return invalid_argument("internal: HDF5 type mapped to a bad dtype '" + text + "'");
  return d;
}

Result<DType> integer_dtype(hid_t type, const std::string& where) {
  const size_t size = H5Tget_size(type);
  const char order = byte_order(type);
  const bool sized = size == 1 || size == 2 || size == 4 || size == 8;
  // An integer with padding bits (H5Tset_precision/offset) has no NumPy dtype.
  if (!sized || order == '\0' || H5Tget_precision(type) != 8 * size || H5Tget_offset(type) != 0)
    return refuse(
        where, bytes_type(size, "integer") + " with " + std::to_string(H5Tget_precision(type)) + " bits of precision");
  const char kind = H5Tget_sign(type) == H5T_SGN_NONE ? 'u' : 'i';
  return dtype_of(std::string(1, order) + kind + std::to_string(size));
}

// IEEE 754 binary16/32/64 layouts: sign bit, exponent position and size, mantissa size, bias.
struct FloatLayout {
  size_t size, spos, epos, esize, msize, ebias;
};
constexpr FloatLayout kIeeeFloats[] = {{2, 15, 10, 5, 10, 15}, {4, 31, 23, 8, 23, 127}, {8, 63, 52, 11, 52, 1023}};

Result<DType> float_dtype(hid_t type, const std::string& where) {
  const size_t size = H5Tget_size(type);
  const char order = byte_order(type);
  size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  bool ieee = order != '\0' && H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) >= 0 && mpos == 0 &&
              H5Tget_norm(type) == H5T_NORM_IMPLIED && H5Tget_precision(type) == 8 * size && H5Tget_offset(type) == 0;
  bool known = false;
  for (const FloatLayout& f : kIeeeFloats)
    known = known || (f.size == size && f.spos == spos && f.epos == epos && f.esize == esize && f.msize == msize &&
                      f.ebias == H5Tget_ebias(type));
  if (!ieee || !known) return refuse(where, bytes_type(size, "float") + " (not IEEE binary16, 32 or 64)");
  return dtype_of(std::string(1, order) + "f" + std::to_string(size));
}

// h5py writes NumPy bools as an enum of int8 with the members FALSE = 0 and TRUE = 1.
bool is_h5py_bool(hid_t type) {
  H5Type base(H5Tget_super(type));
  if (base.id < 0 || H5Tget_class(base.id) != H5T_INTEGER || H5Tget_size(base.id) != 1) return false;
  if (H5Tget_nmembers(type) != 2) return false;
  for (unsigned i = 0; i < 2; ++i) {
    char* name = H5Tget_member_name(type, i);
    if (name == nullptr) return false;
    const bool named = std::strcmp(name, i == 0 ? "FALSE" : "TRUE") == 0;
    H5free_memory(name);
    signed char value = -1;
    if (!named || H5Tget_member_value(type, i, &value) < 0 || value != static_cast<signed char>(i)) return false;
  }
  return true;
}

// What a refused type class is called in the message that refuses it.
const char* refused_class_name(H5T_class_t cls) {
  static constexpr std::pair<H5T_class_t, const char*> kRefused[] = {
      {H5T_COMPOUND, "a compound type"},
      {H5T_REFERENCE, "a reference type"},
      {H5T_OPAQUE, "an opaque type"},
      {H5T_BITFIELD, "a bitfield type"},
      {H5T_TIME, "a time type"},
      {H5T_VLEN, "a variable-length sequence inside another type"},
      {H5T_ARRAY, "an array type inside another type"},
  };
  for (const auto& [refused, name] : kRefused)
    if (refused == cls) return name;
  return "a type of unknown class";
}

// One value's dtype: integer, float, bool or fixed-length string; every other class is
// refused.
Result<DType> scalar_dtype(hid_t type, const std::string& where) {
  const H5T_class_t cls = H5Tget_class(type);
  switch (cls) {
    case H5T_INTEGER:
      return integer_dtype(type, where);
    case H5T_FLOAT:
      return float_dtype(type, where);
    case H5T_ENUM:
      if (!is_h5py_bool(type)) return refuse(where, "an enum type (not h5py's bool)");
      return dtype_of("|b1");
    case H5T_STRING:
      if (H5Tis_variable_str(type) > 0) return refuse(where, "a variable-length string type");
      return dtype_of("|S" + std::to_string(H5Tget_size(type)));
    default:
      return refuse(where, refused_class_name(cls));
  }
}

}  // namespace

Result<H5Element> map_h5_type(hid_t type, const std::string& where) {
  H5Element e;
  const H5T_class_t cls = H5Tget_class(type);
  if (cls == H5T_ARRAY || cls == H5T_VLEN) {
    H5Type base(H5Tget_super(type));
    if (base.id < 0) return invalid_argument(where + ": cannot read its datatype");
    ZREC_ASSIGN_OR_RETURN(e.dtype, scalar_dtype(base.id, where));
    if (cls == H5T_VLEN) {
      if (e.dtype.kind == DTypeKind::kBytes) return refuse(where, "a variable-length sequence of strings");
      e.vlen = true;
      return e;
    }
    const int rank = H5Tget_array_ndims(type);
    if (rank < 0) return invalid_argument(where + ": cannot read its array type");
    std::vector<hsize_t> dims(rank);
    if (rank > 0 && H5Tget_array_dims2(type, dims.data()) < 0)
      return invalid_argument(where + ": cannot read its array type");
    e.array_dims.assign(dims.begin(), dims.end());
    return e;
  }
  ZREC_ASSIGN_OR_RETURN(e.dtype, scalar_dtype(type, where));
  return e;
}

}  // namespace zrec::cli
