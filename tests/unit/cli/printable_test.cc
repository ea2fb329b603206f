// Tests for printable() and the JSON string escaping: control bytes and bytes that are
// not well-formed UTF-8 never reach stderr or --json raw.
#include "cli/formats/printable.h"

#include <string>

#include <doctest/doctest.h>

#include "cli/report/json.h"

namespace zrec::cli {

TEST_SUITE("printable") {
  TEST_CASE("utf8_sequence_length accepts well-formed UTF-8 only") {
    CHECK(utf8_sequence_length("a") == 1);
    CHECK(utf8_sequence_length("\xc3\xa9") == 2);          // é
    CHECK(utf8_sequence_length("\xe2\x82\xac") == 3);      // €
    CHECK(utf8_sequence_length("\xf0\x9f\x98\x80") == 4);  // 😀
    CHECK(utf8_sequence_length("") == 0);
    CHECK(utf8_sequence_length("\xff") == 0);
    CHECK(utf8_sequence_length("\xc0\xaf") == 0);          // overlong '/'
    CHECK(utf8_sequence_length("\xe0\x80\xaf") == 0);      // overlong
    CHECK(utf8_sequence_length("\xed\xa0\x80") == 0);      // surrogate U+D800
    CHECK(utf8_sequence_length("\xf4\x90\x80\x80") == 0);  // above U+10FFFF
    CHECK(utf8_sequence_length("\xc3") == 0);              // cut short
    CHECK(utf8_sequence_length("\xe2\x82") == 0);
  }

  TEST_CASE("printable escapes control and non-UTF-8 bytes, keeps UTF-8") {
    CHECK(printable("plain/path") == "plain/path");
    CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");
    CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(printable("x\x1b[31m\ny\r\t\x7f") == "x\\x1b[31m\\x0ay\\x0d\\x09\\x7f");
    CHECK(printable("\xff\xfe\xc3") == "\\xff\\xfe\\xc3");
  }

  TEST_CASE("JSON strings are valid UTF-8 whatever the input") {
    std::string out;
    append_json_string(out, std::string("a\"\\\n\x1b\xff\xc3\xa9\0", 9));
    CHECK(out == "\"a\\\"\\\\\\n\\u001b\\ufffd\xc3\xa9\\u0000\"");
  }
}

}  // namespace zrec::cli
