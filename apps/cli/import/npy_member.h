// append-tar's array members: a member "KEY.STREAM.npy" (as cat --format tar writes a
// stream of arrays, and as WebDataset's decoders read any member ending in ".npy")
// holds one .npy file, whose array is one record of the stream STREAM, byte-exact.
#pragma once

#include <cstdint>
#include <string>

#include "zrec/schema.h"
#include "zrec/status.h"

#include "cli/formats/npy.h"
#include "cli/import/tar_reader.h"

namespace zrec::cli {

// The stream an extension names as arrays: "vec.npy" -> "vec"; empty for one that
// does not end in ".npy" after a stream's name ("npy" alone is a stream's own name).
std::string npy_member_stream(const std::string& ext);

struct NpyMember {
  NpyHeader header;
  uint64_t header_bytes = 0;  // the member's bytes before the array's data
};

// Reads the .npy header at the start of member `m` from `reader` (the data follows),
// and checks that the member holds exactly its array (no bytes missing or left over),
// in C order, with at least one element (records are nonempty).
Result<NpyMember> read_npy_member(TarReader& reader, const TarMember& m);

// A new stream's schema from its first array: Dense of the array's shape when `dense`
// or when the array is 0-d (a Ragged record has at least one axis), otherwise Ragged of
// its ndim, so later arrays may differ in every dimension.
Schema npy_stream_schema(const NpyHeader& h, bool dense);

// The array can be a record of the stream at `path` of `schema`: the same dtype, and
// the item shape (Dense) or the ndim (Ragged); a record holds at most kMaxRecordBytes.
Status check_npy_record(const NpyHeader& h, const Schema& schema, const std::string& member, const std::string& path);

}  // namespace zrec::cli
