// The -o PATTERN of `zrec cat --format tar --maxcount N`: the file name of each shard,
// e.g. "shard-%06d.tar" -> shard-000000.tar, shard-000001.tar, ... (as webdataset's
// ShardWriter and tarp name them). The pattern holds exactly one integer conversion,
// %d with an optional 0 flag and width (%d, %6d, %06d); nothing else in it is
// interpreted: any other '%' is refused, and the name is built here, never by printf.
//
//   auto p = ShardPattern::parse("out/shard-%06d.tar");  // ok
//   p->name(12);                                           // "out/shard-000012.tar"
//   ShardPattern::parse("shard.tar");                      // error: no %d
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "zrec/status.h"

namespace zrec::cli {

class ShardPattern {
 public:
  // kInvalidArgument naming the rule: no conversion, two of them, another '%' sequence,
  // or a width over 20.
  static Result<ShardPattern> parse(const std::string& pattern);
  std::string name(uint64_t index) const;
  // Whether `path` is name(i) for some i: a shard of an export with this pattern.
  bool names(std::string_view path) const;
  // The directory the shards go to ("." or the pattern's part up to its last '/').
  std::string directory() const;

 private:
  std::string prefix_, suffix_;
  size_t width_ = 0;
  bool zero_pad_ = false;
};

}  // namespace zrec::cli
