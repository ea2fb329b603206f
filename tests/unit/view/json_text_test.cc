// Tests for pretty_json(): JSON objects and arrays are indented as Python's
// json.dumps(indent=2) writes them; anything else is not taken for JSON.
#include "cli/view/json_text.h"

#include <doctest/doctest.h>

namespace zrec::cli::view {

TEST_SUITE("json_text") {
  TEST_CASE("objects and arrays are indented two spaces a level, values copied as written") {
    CHECK(*pretty_json(R"( {"a": [1, 2.5e-3, "x\"y\u00e9"], "b": {}, "c": [], "d": true, "e": null} )", 1000) ==
          "{\n  \"a\": [\n    1,\n    2.5e-3,\n    \"x\\\"y\\u00e9\"\n  ],\n  \"b\": {},\n  \"c\": [],\n"
          "  \"d\": true,\n  \"e\": null\n}");
    CHECK(*pretty_json("[\"caf\xc3\xa9\"]", 100) == "[\n  \"caf\xc3\xa9\"\n]");
  }

  TEST_CASE("only a whole, valid object or array is JSON") {
    for (const char* text : {"", "1", "\"s\"", "true", "{", "[1,]", "{\"a\" 1}", "{\"a\":1}x", "[01]", "[1.]",
                             "[\"\x01\"]", "[\"\\q\"]", "[\"\\u12g4\"]", "[\"\xff\"]", "{1: 2}", "[-]", "[1e]"}) {
      CAPTURE(text);
      CHECK(!pretty_json(text, 100));
    }
    CHECK(!pretty_json(std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']'), 1 << 20));
    CHECK(pretty_json(std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']'), 1 << 20));
  }

  TEST_CASE("a long document is cut after max_bytes, with ...") {
    CHECK(*pretty_json("[1, 2, 3]", 8) == "[\n  1,\n ...");
  }
}

}  // namespace zrec::cli::view
