// Tests for how a line of an HTTP response's head is split (io/http_header.h), which the
// remote store reader and the S3 client both read their responses' heads with.
#include "io/http_header.h"

#include <string>

#include <doctest/doctest.h>

namespace zrec::io {

TEST_SUITE("http_header") {
  TEST_CASE("a status line starts a response: its code and its words") {
    const HeaderLine h = parse_header_line("HTTP/1.1 206 Partial Content\r\n");
    CHECK(h.starts_response);
    CHECK(h.status == 206);
    CHECK(h.status_text == "206 Partial Content");
    CHECK(h.name.empty());
  }

  TEST_CASE("a status line without a code: status 0") {
    const HeaderLine h = parse_header_line("HTTP/2 ???\r\n");
    CHECK(h.starts_response);
    CHECK(h.status == 0);
    CHECK(parse_header_line("HTTP/1.1\r\n").status_text.empty());
  }

  TEST_CASE("a field: its name compared without case, its value trimmed of spaces and tabs") {
    const HeaderLine h = parse_header_line("ETag: \t\"abc\" \r\n");
    CHECK_FALSE(h.starts_response);
    CHECK(h.is("etag"));
    CHECK_FALSE(h.is("etags"));
    CHECK(h.value == "\"abc\"");
    CHECK(parse_header_line("content-LENGTH:42").is("content-length"));
  }

  TEST_CASE("the blank line that ends the head, and a line without a colon, are no field") {
    CHECK(parse_header_line("\r\n").name.empty());
    CHECK_FALSE(parse_header_line("garbage\r\n").is("garbage"));
  }

  TEST_CASE("trim_space") {
    CHECK(trim_space(" \tx y\t \r\n") == "x y");
    CHECK(trim_space("\r\n").empty());
  }
}

}  // namespace zrec::io
