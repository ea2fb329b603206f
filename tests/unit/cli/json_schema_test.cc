// Tests for write_schema (apps/cli/report/json.h): the one place the --json reports of info,
// verify and bench spell a schema.
#include <doctest/doctest.h>

#include "cli/report/json.h"

namespace zrec::cli {
namespace {

std::string schema_json(const Schema& s) {
  JsonWriter j;
  j.begin_object();
  write_schema(j, s);
  j.end_object();
  return j.str();
}

TEST_SUITE("json") {
  TEST_CASE("write_schema: Dense with its item_shape, Ragged with null") {
    auto dense = parse_dtype("|u1");
    auto floats = parse_dtype("<f4");
    REQUIRE(dense.is_ok());
    REQUIRE(floats.is_ok());
    CHECK(schema_json(Schema{dense.value(), 3, std::vector<uint64_t>{3, 224, 224}}) ==
          R"({"kind": "dense", "dtype": "|u1", "ndim": 3, "item_shape": [3, 224, 224]})");
    CHECK(schema_json(Schema{floats.value(), 2, std::nullopt}) ==
          R"({"kind": "ragged", "dtype": "<f4", "ndim": 2, "item_shape": null})");
    CHECK(std::string(schema_kind(Schema{floats.value(), 1, std::nullopt})) == "ragged");
  }
}

}  // namespace
}  // namespace zrec::cli
