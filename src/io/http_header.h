// One line of an HTTP response's head as libcurl's CURLOPT_HEADERFUNCTION hands it over,
// split once for every reader of one (the remote store reader, the S3 client): the
// status line that starts a response (again after a redirect or a 100 Continue), or a
// field "Name: value".
//
// Example:
//   const HeaderLine h = parse_header_line("Content-Length: 42\r\n");
//   // h.starts_response == false, h.is("content-length"), h.value == "42"
#pragma once

#include <string>
#include <string_view>

namespace zrec::io {

struct HeaderLine {
  bool starts_response = false;  // "HTTP/1.1 200 OK": what came before belongs to another response
  long status = 0;               // the status line's code; 0 when it has none
  std::string status_text;       // the status line after the version: "200 OK"
  std::string_view name;         // a field's name as sent; empty on any other line
  std::string value;             // the field's value, without the white space around it

  // Whether the field is `lower_name` (lower case), compared without case as HTTP does.
  bool is(std::string_view lower_name) const;
};

HeaderLine parse_header_line(std::string_view line);

// `s` without the spaces, tabs and line ends around it (header values, libcurl's errors).
std::string trim_space(std::string_view s);

}  // namespace zrec::io
