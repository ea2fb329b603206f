// HDF5 datatypes as NumPy dtypes (append-h5): the element type of a dataset mapped to
// the dtype string zrec stores it as, keeping the file's byte order, so the file's
// bytes are the record's bytes (the dataset is read with its own type: no conversion).
//
//   integer (1, 2, 4, 8 bytes, signed or not)  -> <i8, >u2, |i1, ...
//   IEEE float (2, 4, 8 bytes)                 -> <f2, >f4, <f8
//   h5py's bool (enum FALSE=0, TRUE=1 on int8) -> |b1
//   fixed-length string of n bytes             -> |S<n> (its bytes, padding included)
//   array of one of these, dims D              -> that dtype, D appended to the item shape
//   variable-length sequence of numbers        -> their dtype, one Ragged record per row
// Anything else (compound, reference, other enums, variable-length strings, opaque,
// bitfield, time, integers with padding bits, non-IEEE floats) is refused.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <hdf5.h>

#include "zrec/dtype.h"
#include "zrec/status.h"

namespace zrec::cli {

// An HDF5 identifier that `Close` (H5Pclose, H5Sclose, H5Tclose) releases when it goes
// out of scope; -1 (none yet, or HDF5's failure) is left alone.
template <herr_t (*Close)(hid_t)>
struct H5Handle {
  hid_t id = -1;
  H5Handle() = default;
  explicit H5Handle(hid_t i) : id(i) {}
  ~H5Handle() {
    if (id >= 0) Close(id);
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
};
using H5PropertyList = H5Handle<H5Pclose>;
using H5Space = H5Handle<H5Sclose>;
using H5Type = H5Handle<H5Tclose>;

struct H5Element {
  DType dtype;                       // one value (of a sequence, for vlen)
  std::vector<uint64_t> array_dims;  // an array element type: its dims (else empty)
  bool vlen = false;                 // a variable-length sequence: one Ragged ndim-1 record per row
};

// Maps `type` (a dataset's datatype). A refused type is kInvalidArgument, one line:
// "<where> has a compound type; append-h5 takes ...", with `where` naming the file and
// dataset ("dataset 'x' of 'f.h5'") and the type as HDF5 classes it ("an enum type
// (not h5py's bool)", "a variable-length string type", "a 16-byte float type").
Result<H5Element> map_h5_type(hid_t type, const std::string& where);

}  // namespace zrec::cli
