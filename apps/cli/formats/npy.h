// The NumPy .npy format (versions 1.0, 2.0, 3.0): header parsing for append-npy and
// header writing for `cat --format npy`. This is an input/output format of the CLI,
// not part of the store format, so it lives in apps/.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "zrec/dtype.h"
#include "zrec/status.h"

#include "zrec_support/input_stream.h"

namespace zrec::cli {

struct NpyHeader {
  DType dtype;                  // canonical, from 'descr'
  bool fortran_order = false;   // from 'fortran_order'
  std::vector<uint64_t> shape;  // from 'shape'; empty for a 0-d array
  uint64_t element_count = 0;   // prod(shape) (1 for 0-d), overflow-checked
  uint64_t data_bytes = 0;      // element_count * itemsize, overflow-checked
};

// Reads one .npy header (magic, version, header length, the dict) from `in`.
// Returns nullopt when `in` is at EOF before the first byte (the clean end of a
// stream of concatenated arrays). Errors are kInvalidArgument with a message that
// names in.name(), the byte offset of the array in the stream, and the rule broken:
// bad magic, unknown version, truncated header, header too long (> 1 MiB),
// malformed dict, missing/extra keys, structured/object/subarray descr
// ("structured dtypes are not supported"), unsupported dtype (e.g. '<f16'),
// negative or non-integer dims, element count or byte size overflowing 64 bits.
// Does not reject zero-element arrays or Fortran order: callers decide.
Result<std::optional<NpyHeader>> read_npy_header(io::InputStream& in);

// The same from any source of bytes (a tar member): `read_full(dst, n)` reads n bytes,
// fewer only where the input ends. Errors are prefixed by `where`; `header_bytes`, when
// given, receives the bytes the header took (the array's data follows them).
using NpyReadFull = std::function<Result<size_t>(void*, size_t)>;
Result<NpyHeader> read_npy_header(const NpyReadFull& read_full, const std::string& where, uint64_t* header_bytes);

// Parses the header dict text alone, e.g. "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }".
// Exposed for unit tests and fuzzing. `where` prefixes error messages.
Result<NpyHeader> parse_npy_header_dict(std::string_view dict_text, const std::string& where);

// "(3, 224, 224)" / "(5,)" / "()": Python tuple spelling of a shape.
std::string shape_to_string(const std::vector<uint64_t>& shape);

// How an array becomes records, one rule for every command that reads .npy arrays as
// records (append-npy, train-dict). Errors are kInvalidArgument "WHERE: RULE".
//
// check_npy_array: the array may hold records at all: not Fortran-order with more than
// one dimension, and at least one element (an input with nothing in it is almost
// always a bug upstream worth stopping for).
Status check_npy_array(const NpyHeader& h, const std::string& where);

struct NpyRecords {
  uint64_t records = 0;       // how many records the array holds
  uint64_t record_bytes = 0;  // the payload of each (without a Ragged record's dims)
  // Dense: the item shape (the array's shape without axis 0). Ragged: every record's dims.
  std::vector<uint64_t> item;
};

// npy_records: axis 0 indexes records for a Dense store and, with `split_axis0`, for a
// Ragged one; otherwise the whole array is one Ragged record. A record, with a Ragged
// record's 8-byte dims, holds at most kMaxRecordBytes (zrec/format.h).
Result<NpyRecords> npy_records(const NpyHeader& h, bool ragged, bool split_axis0, const std::string& where);

// The exact header bytes numpy.save writes for an array of this dtype and shape, C
// order: magic, version 1.0 (2.0 if the dict needs more than 65535 bytes), dict with
// keys descr/fortran_order/shape in that order, padded with spaces and a final '\n'
// so the data starts at a multiple of 64 bytes.
std::string encode_npy_header(const DType& dtype, std::span<const uint64_t> shape);

}  // namespace zrec::cli
