// The schema as MsgPack (docs/format.md §4 and §10): writers emit exactly what
// msgpack-python's packb emits for {"dtype": ..., "ndim": ..., ["item_shape": [...]]};
// readers accept any valid encoding and any key order, and reject everything else.
#pragma once

#include <string>
#include <string_view>

#include "zrec/schema.h"
#include "zrec/status.h"

namespace zrec::format {

// Requires schema.validate() to pass.
std::string encode_schema(const Schema& schema);

// kMalformed with the rule broken: not a map, unknown/missing/duplicate key, wrong
// type, non-canonical dtype, item_shape length != ndim, trailing bytes, and every
// Schema::validate() rule.
Result<Schema> decode_schema(std::string_view bytes);

}  // namespace zrec::format
