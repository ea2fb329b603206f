// Tests for how s3:// objects are requested (io/s3_request.h): the endpoint's URL of an
// object and its AWS Signature Version 4. The expected signatures were computed by an
// independent implementation (botocore's S3SigV4Auth) for the same request and time;
// tests/cli/test_s3.py checks the signatures against a server that verifies them.
#include "io/s3_request.h"

#include <string>

#include <doctest/doctest.h>

namespace zrec::io {

namespace {

constexpr std::time_t kWhen = 1796619628;  // 2026-12-07T05:00:28Z

S3Config example(std::string endpoint = "", std::string token = "") {
  S3Config c;
  c.endpoint = std::move(endpoint);
  c.region = "us-east-1";
  c.access_key = "AKIAIOSFODNN7EXAMPLE";
  c.secret_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  c.session_token = std::move(token);
  return c;
}

std::string header(const S3Request& r, const std::string& name) {
  for (const std::string& h : r.headers)
    if (h.starts_with(name + ": ")) return h.substr(name.size() + 2);
  return "";
}

}  // namespace

TEST_SUITE("s3_request") {
  TEST_CASE("AWS's own endpoint: virtual-hosted, the key percent-encoded, signed") {
    auto r = s3_get("s3://examplebucket/photos/a b.jpg", example(), kWhen);
    REQUIRE(r.is_ok());
    CHECK(r->url == "https://examplebucket.s3.us-east-1.amazonaws.com/photos/a%20b.jpg");
    CHECK(header(*r, "Host") == "examplebucket.s3.us-east-1.amazonaws.com");
    CHECK(header(*r, "x-amz-date") == "20261207T050028Z");
    CHECK(header(*r, "Authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261207/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
          "Signature=576c73ec98041fad82d1b8b28ba3ecd389d30acfd3314114df5f537f0a852d94");
  }

  TEST_CASE("a given endpoint: path-style, and a session token signed with the rest") {
    auto r = s3_get("s3://data/ds/meta.zr", example("http://127.0.0.1:9000", "TOKEN"), kWhen);
    REQUIRE(r.is_ok());
    CHECK(r->url == "http://127.0.0.1:9000/data/ds/meta.zr");
    CHECK(header(*r, "Host") == "127.0.0.1:9000");
    CHECK(header(*r, "x-amz-security-token") == "TOKEN");
    CHECK(header(*r, "Authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261207/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-security-token, "
          "Signature=ef305e6864a69d3de5996f5298aa4d5cb4b1bf171718be136f3ece929fade949");
  }

  TEST_CASE("anonymous requests carry no signature and a URL without a key is refused") {
    S3Config c = example();
    c.anonymous = true;
    auto r = s3_get("s3://public-data/x", c, kWhen);
    REQUIRE(r.is_ok());
    CHECK(r->headers.empty());
    CHECK(!s3_get("s3://bucket-only", c, kWhen).is_ok());
    CHECK(!s3_get("s3://bucket/", c, kWhen).is_ok());
  }

  TEST_CASE("an S3 error body gives its code and message") {
    CHECK(s3_error_text("<?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does "
                        "not exist</Message></Error>") == "NoSuchBucket (The specified bucket does not exist)");
    CHECK(s3_error_text("<Error><Code>SlowDown</Code></Error>") == "SlowDown");
    CHECK(s3_error_text("<html>not found</html>").empty());
  }
}

}  // namespace zrec::io
