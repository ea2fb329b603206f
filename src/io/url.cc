// Telling URLs from paths and writing them for people (zrec/remote.h, io/remote_file.h):
// the parts of remote access that need no libcurl, so a build without it
// (ZREC_REMOTE=OFF) still recognizes a URL and says why it cannot read one.
#include <algorithm>
#include <string>
#include <string_view>

#include "zrec/lanes.h"
#include "zrec/remote.h"

#include "io/location.h"
#include "io/remote_file.h"

namespace zrec {

namespace {

bool starts_with_nocase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

}  // namespace

size_t read_lane_count(std::string_view path, size_t requested) {
  // A remote store's requests in flight: enough to hide a round trip behind the others.
  // Performance note: 8 took 2.0 s for 500 random 10 KiB records through a link of 25 ms
  // a round trip (458 requests: 57 round trips one after another); 32 take 0.7 s, close
  // to the 15 round trips the requests need, and a lane waiting costs a thread's stack,
  // not a CPU (scripts/bench_remote.py, "latency" row).
  constexpr size_t kRemoteLanes = 32;
  if (requested > 0 || !io::Location(std::string(path)).remote()) return read_lane_budget(requested);
  return kRemoteLanes;
}

namespace io {
bool is_https_url(std::string_view text) { return starts_with_nocase(text, "https://"); }

bool is_http_url(std::string_view text) {
  return starts_with_nocase(text, "http://") || starts_with_nocase(text, "https://");
}
}  // namespace io

bool is_url(std::string_view path) { return io::is_http_url(path) || is_s3_url(path); }

bool is_s3_url(std::string_view path) { return starts_with_nocase(path, "s3://"); }

std::string redact_url(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return std::string(url);
  const size_t host_start = scheme_end + 3;
  size_t path_start = url.find_first_of("/?#", host_start);
  if (path_start == std::string_view::npos) path_start = url.size();
  std::string_view authority = url.substr(host_start, path_start - host_start);
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos) authority.remove_prefix(at + 1);
  std::string_view rest = url.substr(path_start);
  std::string out = std::string(url.substr(0, host_start)) + std::string(authority);
  const size_t query = rest.find_first_of("?#");
  // Path parameters (";jsessionid=...") may carry a session as a query does.
  const std::string_view path = rest.substr(0, query);
  for (size_t at = 0; at < path.size();) {
    const size_t semi = path.find(';', at);
    if (semi == std::string_view::npos) {
      out += path.substr(at);
      break;
    }
    out += path.substr(at, semi - at);
    out += ";\xE2\x80\xA6";  // ";…"
    at = std::min(path.size(), path.find('/', semi));
  }
  if (query != std::string_view::npos && rest[query] == '?') out += "?\xE2\x80\xA6";  // "?…"
  return out;
}

std::string redact_urls_in(std::string_view text) {
  std::string out;
  size_t at = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const std::string_view tail = text.substr(i);
    if (!starts_with_nocase(tail, "http://") && !starts_with_nocase(tail, "https://")) continue;
    size_t end = tail.find_first_of(" \t\r\n'\"`");
    if (end == std::string_view::npos) end = tail.size();
    out += text.substr(at, i - at);
    out += redact_url(tail.substr(0, end));
    i += end;
    at = i;
  }
  out += text.substr(std::min(at, text.size()));
  return out;
}

}  // namespace zrec

namespace zrec::io {

std::string percent_encode(std::string_view bytes, bool keep_slashes) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '-' || b == '.' ||
        b == '_' || b == '~' || (keep_slashes && b == '/')) {
      out += c;
    } else {
      out += '%';
      out += kHex[b >> 4];
      out += kHex[b & 15];
    }
  }
  return out;
}

bool access_denied(const Status& status) {
  return status.code() == StatusCode::kIoError && (status.message().find(kAccessDenied) != std::string::npos ||
                                                   status.message().find(kS3AccessDenied) != std::string::npos);
}

}  // namespace zrec::io
