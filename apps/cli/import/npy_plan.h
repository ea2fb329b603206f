// How one .npy array becomes records of a store of a given schema: the checks of its
// dtype and shape against the schema, shared by append-npy into a store and into the
// streams of a root, so both refuse the same arrays with the same words.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "zrec/schema.h"
#include "zrec/status.h"

#include "cli/formats/npy.h"

namespace zrec::cli {

// How one array becomes records.
struct ArrayPlan {
  uint64_t records = 0;
  uint64_t record_bytes = 0;
  std::vector<uint64_t> dims;  // Ragged: the dims of every record of this array
};

// kInvalidArgument "WHERE: RULE" for an array that cannot be records of `schema`.
Result<ArrayPlan> plan_array(const NpyHeader& h, const Schema& schema, bool split_axis0, const std::string& where);

}  // namespace zrec::cli
