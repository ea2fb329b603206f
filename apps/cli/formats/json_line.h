// One JSON object on a line, as append-stream reads a sample of a root: keys to values
// that are strings, numbers, or arrays (nested or not) of numbers. No more of JSON is
// needed, so no more is accepted: true, false, null and objects as values are refused.
//
//   ZREC_ASSIGN_OR_RETURN(std::vector<JsonField> fields, parse_json_object(line));
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/status.h"

namespace zrec::cli {

struct JsonField {
  enum class Kind { kString, kNumber, kArray };
  std::string key;  // UTF-8
  Kind kind = Kind::kString;
  // kString: the string's UTF-8 bytes; kNumber, kArray: the numbers' text, separated by
  // spaces (as parse_numbers reads them).
  std::string text;
  uint64_t count = 0;  // kNumber, kArray: the numbers
};

// The fields of the object `line` holds, in its order; kInvalidArgument naming the byte
// and the rule broken (a repeated key is one).
Result<std::vector<JsonField>> parse_json_object(std::string_view line);

}  // namespace zrec::cli
