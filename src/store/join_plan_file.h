// The plan file of a join in steps (zrec/join.h; the format is in docs/scale-out.md,
// "The plan file"): text, one field per line, paths with their byte count before them
// so that any name (newlines included) reads back exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/format.h"
#include "zrec/join.h"
#include "zrec/status.h"

namespace zrec::store {

struct JoinPlanFile {
  std::string id;    // 32 lowercase hex digits, random: names this join in its markers
  std::string dest;  // absolute
  std::string temp;  // absolute: ".NAME.zrec-join-XXXXXX" next to dest
  uint32_t shards = 0;
  Codec codec = Codec::kZstd;
  bool checksum = false;   // an empty DEST keeps the checksum marker
  std::string schema;      // DEST's MsgPack schema bytes
  std::string dictionary;  // SHA-256 of dict.zr, hex; "" without one
  struct Part {
    std::string path;  // absolute
    JoinPartShape shape;
    friend bool operator==(const Part& a, const Part& b) {
      return a.path == b.path && a.shape.length == b.shape.length && a.shape.tails == b.shape.tails;
    }
  };
  std::vector<Part> parts;

  friend bool operator==(const JoinPlanFile&, const JoinPlanFile&) = default;
};

// The file's first line; also what tells a leftover temporary plan file as zrec's.
inline constexpr std::string_view kJoinPlanMagic = "zrec-join-plan 1\n";

std::string encode_join_plan(const JoinPlanFile& plan);

// kMalformed "'name' is not a zrec join plan: line N: ..." for anything else.
Result<JoinPlanFile> decode_join_plan(std::string_view text, const std::string& name);

}  // namespace zrec::store
