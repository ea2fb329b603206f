// Tests for AccessGuard: the token as the path's first segment, compared whole; the Host
// header naming this server; the URL printed.
#include "cli/view/access_guard.h"

#include <doctest/doctest.h>

namespace zrec::cli::view {

TEST_SUITE("access_guard") {
  TEST_CASE("new_token: 48 hex digits, a new one each time") {
    const std::string a = AccessGuard::new_token().value(), b = AccessGuard::new_token().value();
    CHECK((a.size() == 48 && a.find_first_not_of("0123456789abcdef") == std::string::npos && a != b));
  }

  TEST_CASE("strip_token takes /TOKEN and /TOKEN/... only") {
    AccessGuard g("abc123", "127.0.0.1");
    CHECK(*g.strip_token("/abc123") == "/");
    CHECK(*g.strip_token("/abc123/") == "/");
    CHECK(*g.strip_token("/abc123/api/paths") == "/api/paths");
    for (const char* bad : {"", "/", "/abc12", "/abc1234", "/abc124/x", "abc123/", "/ABC123/", "//abc123/"}) {
      CAPTURE(bad);
      CHECK(!g.strip_token(bad));
    }
  }

  TEST_CASE("host_allowed: localhost or a numeric address, with this port") {
    AccessGuard g("t", "127.0.0.1");
    g.set_port(8765);
    const std::string ok[] = {"127.0.0.1:8765", "localhost:8765", "LOCALHOST:8765", "[::1]:8765", "192.168.1.5:8765"};
    for (const std::string& h : ok) CHECK(g.host_allowed(&h));
    const std::string bad[] = {"127.0.0.1",
                               "127.0.0.1:8766",
                               "evil.example:8765",
                               "localhost.evil:8765",
                               "127.0.0.1.nip.io:8765",
                               "::1:8765",
                               "[evil]:8765",
                               ""};
    for (const std::string& h : bad) CHECK(!g.host_allowed(&h));
    CHECK(!g.host_allowed(nullptr));
    AccessGuard lan("t", "192.168.1.5");
    lan.set_port(80);
    CHECK(lan.url() == "http://192.168.1.5:80/t/");
    AccessGuard any6("t", "::");
    any6.set_port(9);
    CHECK(any6.url() == "http://[::1]:9/t/");
  }

  TEST_CASE("security_headers: a strict CSP and nosniff") {
    bool csp = false, nosniff = false;
    for (const auto& [k, v] : AccessGuard::security_headers()) {
      if (k == "Content-Security-Policy") csp = v.starts_with("default-src 'none'; script-src 'self';");
      if (k == "X-Content-Type-Options") nosniff = v == "nosniff";
    }
    CHECK((csp && nosniff));
  }
}

}  // namespace zrec::cli::view
