// s3_sign (see s3_request.h): AWS Signature Version 4, as the S3 API reference's
// "Signature Calculations for the Authorization Header" lays it out: a canonical request
// (method, path, sorted query, sorted signed headers, the body's hash), a string to sign
// over its hash, and an HMAC-SHA256 chain from the secret key through the date, region
// and service.
#include "io/s3_request.h"

#include <algorithm>
#include <string_view>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "format/sha256.h"
#include "io/remote_file.h"

namespace zrec::io {

namespace {

constexpr const char* kEmptyBodySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// A key as the path of a URL, which is also the canonical URI that S3 signs.
std::string encode_key(std::string_view key) { return percent_encode(key, true); }

std::string hmac(std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &n);
  return std::string(reinterpret_cast<const char*>(out), n);
}

std::string hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const char c : bytes) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

std::string utc(std::time_t now, const char* format) {
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// "scheme://host[:port]" of an endpoint URL, and its authority (the Host header).
std::string authority_of(const std::string& endpoint) {
  const size_t start = endpoint.find("://") + 3;
  std::string a = endpoint.substr(start, endpoint.find('/', start) - start);
  if (const size_t at = a.rfind('@'); at != std::string::npos) a = a.substr(at + 1);
  return a;
}

std::string between(const std::string& body, const std::string& open, const std::string& close) {
  const size_t a = body.find(open);
  if (a == std::string::npos) return {};
  const size_t b = body.find(close, a + open.size());
  return b == std::string::npos ? std::string() : body.substr(a + open.size(), b - a - open.size());
}

}  // namespace

std::string s3_canonical_query(std::vector<std::pair<std::string, std::string>> query) {
  for (auto& [name, value] : query) {
    name = percent_encode(name, false);
    value = percent_encode(value, false);
  }
  std::sort(query.begin(), query.end());
  std::string out;
  for (const auto& [name, value] : query) out += (out.empty() ? "" : "&") + name + "=" + value;
  return out;
}

Result<S3Request> s3_sign(const std::string& s3_url, const S3Call& call, const S3Config& config, std::time_t now) {
  const std::string_view rest = std::string_view(s3_url).substr(5);  // after "s3://"
  const size_t slash = rest.find('/');
  const std::string bucket(rest.substr(0, slash));
  const std::string key(slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1));
  if (bucket.empty() || (key.empty() && !call.bucket_level))
    return invalid_argument("'" + s3_url + "' names no object: an S3 URL is s3://BUCKET/KEY");
  S3Request r;
  std::string scheme_host, path;
  if (!config.endpoint.empty()) {  // S3-compatible servers: path-style
    scheme_host = config.endpoint.substr(0, config.endpoint.find('/', config.endpoint.find("://") + 3));
    path = "/" + encode_key(bucket) + (key.empty() ? "" : "/" + encode_key(key));
  } else if (bucket.find('.') != std::string::npos) {  // a dotted bucket breaks the wildcard certificate
    scheme_host = "https://s3." + config.region + ".amazonaws.com";
    path = "/" + bucket + (key.empty() ? "" : "/" + encode_key(key));
  } else {
    scheme_host = "https://" + bucket + ".s3." + config.region + ".amazonaws.com";
    path = "/" + encode_key(key);
  }
  const std::string query = s3_canonical_query(call.query);
  r.url = scheme_host + path + (query.empty() ? "" : "?" + query);
  if (config.anonymous) {
    for (const auto& [name, value] : call.headers) r.headers.push_back(name + ": " + value);
    return r;
  }

  const std::string body_sha256 = call.body_sha256.empty() ? kEmptyBodySha256 : call.body_sha256;
  const std::string host = authority_of(scheme_host);
  const std::string amz_date = utc(now, "%Y%m%dT%H%M%SZ");
  const std::string date = amz_date.substr(0, 8);
  // Every signed header, sorted by name as the canonical request lists them.
  std::vector<std::pair<std::string, std::string>> signed_list = call.headers;
  signed_list.emplace_back("host", host);
  signed_list.emplace_back("x-amz-content-sha256", body_sha256);
  signed_list.emplace_back("x-amz-date", amz_date);
  if (!config.session_token.empty()) signed_list.emplace_back("x-amz-security-token", config.session_token);
  std::sort(signed_list.begin(), signed_list.end());
  std::string canonical_headers, signed_headers;
  for (const auto& [name, value] : signed_list) {
    canonical_headers += name + ":" + value + "\n";
    signed_headers += (signed_headers.empty() ? "" : ";") + name;
  }
  const std::string canonical_request =
      call.method + "\n" + path + "\n" + query + "\n" + canonical_headers + "\n" + signed_headers + "\n" + body_sha256;
  const std::string scope = date + "/" + config.region + "/s3/aws4_request";
  const std::string to_sign = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" +
                              format::to_hex(format::Sha256::hash(canonical_request.data(), canonical_request.size()));
  const std::string signing_key =
      hmac(hmac(hmac(hmac("AWS4" + config.secret_key, date), config.region), "s3"), "aws4_request");
  r.headers = {"Host: " + host, "x-amz-date: " + amz_date, "x-amz-content-sha256: " + body_sha256,
               "Authorization: AWS4-HMAC-SHA256 Credential=" + config.access_key + "/" + scope +
                   ", SignedHeaders=" + signed_headers + ", Signature=" + hex(hmac(signing_key, to_sign))};
  if (!config.session_token.empty()) r.headers.push_back("x-amz-security-token: " + config.session_token);
  for (const auto& [name, value] : call.headers) r.headers.push_back(name + ": " + value);
  return r;
}

Result<S3Request> s3_get(const std::string& s3_url, const S3Config& config, std::time_t now) {
  return s3_sign(s3_url, S3Call{}, config, now);
}

std::string s3_error_text(const std::string& body) {
  const std::string code = between(body, "<Code>", "</Code>");
  if (code.empty()) return {};
  const std::string message = between(body, "<Message>", "</Message>");
  return message.empty() ? code : code + " (" + message + ")";
}

}  // namespace zrec::io
