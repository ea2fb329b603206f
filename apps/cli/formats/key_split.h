// Stable splits for `zrec split --by-key-hash`: a sample's split is a pure function of
// its key and a salt, so it never changes as the dataset grows or is reordered.
//
//   u = first 8 bytes of SHA-256(salt || 0x00 || key), big-endian, / 2^64   in [0, 1)
//
// and the splits take consecutive intervals of [0, 1) in the order given: for
// "val=5%,test=5%,train=rest", val is u < 0.05, test 0.05 <= u < 0.10, train the rest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/status.h"

namespace zrec::cli {

struct SplitPart {
  std::string name;
  uint64_t below = 0;  // u * 2^64 < below (cumulative); the last part takes everything left
  bool rest = false;   // given as "rest"
};

// Parses "NAME=P%,NAME=F,...,NAME=rest": P a percentage (0..100), F a fraction (0..1),
// at most one "rest", which is the remainder; names are distinct words of letters,
// digits, '_', '-' and '.'. Without "rest" the parts must add up to 100%. Errors quote
// the text and name the rule.
Result<std::vector<SplitPart>> parse_split_spec(std::string_view text);

// u * 2^64 for `key` (the formula above).
uint64_t key_point(std::string_view salt, std::string_view key);

// The index in `parts` of the split `point` falls in.
size_t split_of(const std::vector<SplitPart>& parts, uint64_t point);

}  // namespace zrec::cli
