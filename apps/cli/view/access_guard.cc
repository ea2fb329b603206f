// AccessGuard (see access_guard.h).
#include "cli/view/access_guard.h"

#include <arpa/inet.h>
#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace zrec::cli::view {

namespace {

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool is_ipv6(const std::string& address) { return address.find(':') != std::string::npos; }

bool is_wildcard(const std::string& address) { return address == "0.0.0.0" || address == "::"; }

// Equal in time that depends on the lengths only, not on where the first difference is.
bool same_bytes(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

AccessGuard::AccessGuard(std::string token, std::string bind_address)
    : token_(std::move(token)), bind_address_(std::move(bind_address)) {}

Result<std::string> AccessGuard::new_token() {
  unsigned char bytes[24];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(std::string("cannot draw a random token: ") + std::strerror(errno));
    got += static_cast<size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

void AccessGuard::set_port(uint16_t port) { port_ = port; }

bool AccessGuard::host_allowed(const std::string* host) const {
  if (host == nullptr) return false;
  const std::string h = lowercase(*host);
  const size_t colon = h.rfind(':');
  if (colon == std::string::npos || h.substr(colon + 1) != std::to_string(port_)) return false;
  const std::string name = h.substr(0, colon);
  if (name == "localhost") return true;
  // A numeric address cannot be rebound: a page that reaches us by one has that address
  // as its origin, not a name its author controls.
  in_addr v4;
  in6_addr v6;
  if (::inet_pton(AF_INET, name.c_str(), &v4) == 1) return true;
  return name.size() > 2 && name.front() == '[' && name.back() == ']' &&
         ::inet_pton(AF_INET6, name.substr(1, name.size() - 2).c_str(), &v6) == 1;
}

std::optional<std::string_view> AccessGuard::strip_token(std::string_view path) const {
  // "/" TOKEN, then the end or "/..."
  if (path.size() < token_.size() + 1 || path[0] != '/') return std::nullopt;
  if (!same_bytes(path.substr(1, token_.size()), token_)) return std::nullopt;
  std::string_view rest = path.substr(token_.size() + 1);
  if (rest.empty()) return std::string_view("/");
  if (rest[0] != '/') return std::nullopt;
  return rest;
}

std::string AccessGuard::url() const {
  const std::string host = is_wildcard(bind_address_) ? (is_ipv6(bind_address_) ? "[::1]" : "127.0.0.1")
                           : is_ipv6(bind_address_)   ? "[" + bind_address_ + "]"
                                                      : bind_address_;
  return "http://" + host + ":" + std::to_string(port_) + "/" + token_ + "/";
}

HeaderList AccessGuard::security_headers() {
  return {
      {"Content-Security-Policy",
       "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"X-Frame-Options", "DENY"},
      {"Cross-Origin-Resource-Policy", "same-origin"},
      {"Cache-Control", "no-store"},
  };
}

}  // namespace zrec::cli::view
