// Who may use a running `zrec view`: a request must carry the run's random token as the
// first segment of its path (/TOKEN/...: the URL printed at start, as Jupyter prints one),
// and its Host header must be a numeric address or localhost with this server's port
// (127.0.0.1:PORT, [::1]:PORT, 192.168.1.5:PORT with --bind 0.0.0.0): a DNS-rebinding
// page reaches the server under a name of its author's, which is refused. Every response carries security_headers(): a
// Content-Security-Policy that lets the page load its own files only (no inline script, nothing from elsewhere),
// nosniff so that no response is ever read as another type than it says (record bytes as HTML), no-referrer so the
// token never leaves in a Referer header, and no caching.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/status.h"

#include "cli/view/http_transport.h"

namespace zrec::cli::view {

class AccessGuard {
 public:
  // token: from new_token(). bind_address: the numeric address listened on.
  AccessGuard(std::string token, std::string bind_address);

  // 24 bytes from getrandom(2), as 48 lowercase hex digits. kIoError when the system
  // has no randomness to give.
  static Result<std::string> new_token();

  // Called once the port is known (hosts_allowed() needs it).
  void set_port(uint16_t port);

  const std::string& token() const { return token_; }

  // True when `host` (the Host header's value) is "localhost", a numeric IPv4 address or
  // a bracketed IPv6 one, with this server's port; nullptr (no Host header) is refused.
  bool host_allowed(const std::string* host) const;

  // The rest of `path` after "/TOKEN" ("/" for "/TOKEN" itself), or nullopt when the
  // path does not start with the token. Compared in constant time.
  std::optional<std::string_view> strip_token(std::string_view path) const;

  // The URL to print: http://HOST:PORT/TOKEN/ (HOST: the bind address, or 127.0.0.1
  // for a wildcard address).
  std::string url() const;

  // The headers every response carries (see the file comment).
  static HeaderList security_headers();

 private:
  std::string token_;
  std::string bind_address_;
  uint16_t port_ = 0;
};

}  // namespace zrec::cli::view
