// Tests for cli/formats/json_string.h, the one JSON string escaper: the union of what
// the --json reports and `cat --format jsonl` each escaped before they shared it (DEL
// as \u007f, \b and \f by their short forms), the same through both.
#include "cli/formats/json_string.h"

#include <string>

#include <doctest/doctest.h>

#include "zrec/dtype.h"

#include "cli/formats/record_format.h"

namespace zrec::cli {
namespace {

std::string json_string(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

}  // namespace

TEST_SUITE("json_string") {
  TEST_CASE("every control character, DEL, quote and backslash is escaped, and nothing else") {
    CHECK(json_string("\"\\") == R"("\"\\")");
    CHECK(json_string("\b\f\n\r\t") == R"("\b\f\n\r\t")");
    CHECK(json_string(std::string("\0\x01\x1f\x7f", 4)) == R"("\u0000\u0001\u001f\u007f")");
    CHECK(json_string(" ~/'<>&") == "\" ~/'<>&\"");
    CHECK(json_string("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80") == "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  }

  TEST_CASE("bytes that are not well-formed UTF-8 become U+FFFD, one each") {
    CHECK(json_string("a\xff\xc3(b") == R"("a\ufffd\ufffd(b")");
    CHECK(json_string("\xed\xa0\x80") == R"("\ufffd\ufffd\ufffd")");  // a surrogate
  }

  TEST_CASE("code points are encoded as UTF-8 unless they must be escaped") {
    std::string out;
    for (uint32_t c : {0x41u, 0x7fu, 0x08u, 0xe9u, 0x20acu, 0x1f600u}) append_json_char(out, c);
    CHECK(out == "A\\u007f\\b\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  }

  TEST_CASE("cat --format jsonl's unicode values escape as the reports do") {
    const DType u4 = parse_dtype("<U4").value();
    // U+0008, U+000C, U+007F, 'a': little-endian UTF-32.
    const uint8_t data[16] = {8, 0, 0, 0, 12, 0, 0, 0, 0x7f, 0, 0, 0, 'a', 0, 0, 0};
    std::string out;
    append_json_record(out, u4, {}, data);
    CHECK(out == json_string("\b\f\x7f"
                             "a"));
    CHECK(out == R"("\b\f\u007fa")");
  }
}

}  // namespace zrec::cli
