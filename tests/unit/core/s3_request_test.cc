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

  // sync's requests (zrec sync): a method, a body's hash, a query string and headers of
  // its own signed with the rest. Signatures by botocore's S3SigV4Auth for the same
  // request, body and time.
  TEST_CASE("an UploadPart: PUT with a body hash, a query encoded and sorted, a metadata header signed") {
    S3Call call{.method = "PUT",
                .query = {{"uploadId", "a/b=c"}, {"partNumber", "3"}},
                .body_sha256 = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",  // "hello"
                .headers = {{"x-amz-meta-zrec-sha256", "ab"}}};
    auto r = s3_sign("s3://data/ds/data_0.zr", call, example("http://127.0.0.1:9000"), kWhen);
    REQUIRE(r.is_ok());
    CHECK(r->url == "http://127.0.0.1:9000/data/ds/data_0.zr?partNumber=3&uploadId=a%2Fb%3Dc");
    CHECK(header(*r, "x-amz-content-sha256") == call.body_sha256);
    CHECK(header(*r, "x-amz-meta-zrec-sha256") == "ab");
    CHECK(header(*r, "Authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261207/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;x-amz-content-sha256;x-amz-date;x-amz-meta-zrec-sha256, "
          "Signature=8d36161aabd1e7b20a1e2ed904925a524f456348e1bef1607b3b1e548447a39f");
  }

  TEST_CASE("CreateMultipartUpload, a bucket's ListMultipartUploads and a conditional PUT") {
    const S3Config c = example("http://127.0.0.1:9000");
    auto create = s3_sign("s3://data/ds/meta.zr", {.method = "POST", .query = {{"uploads", ""}}}, c, kWhen);
    REQUIRE(create.is_ok());
    CHECK(create->url == "http://127.0.0.1:9000/data/ds/meta.zr?uploads=");
    CHECK(header(*create, "Authorization")
              .ends_with("Signature=c3f1fb9ee3b47bdee1b07b368ba884f51a17ab56abe5140c9f7464471cee5665"));
    auto list = s3_sign("s3://data", {.query = {{"uploads", ""}, {"prefix", "ds"}}, .bucket_level = true}, c, kWhen);
    REQUIRE(list.is_ok());
    CHECK(list->url == "http://127.0.0.1:9000/data?prefix=ds&uploads=");
    CHECK(header(*list, "Authorization")
              .ends_with("Signature=b1f6a09d41bfe9bd20637da939904444eb3346dc19b5b1c9b7a610fc3a923e22"));
    CHECK(!s3_sign("s3://data", {}, c, kWhen).is_ok());  // an object's request needs a key
    const S3Call marker{
        .method = "PUT",
        .body_sha256 = "0a457e56e75a0f146eb615e12b0625935a3c6742918dfe16fd0afcd8faac089e",  // "zrec-root 1\n"
        .headers = {{"if-none-match", "*"}}};
    auto put = s3_sign("s3://data/ds/zrec-root", marker, c, kWhen);
    REQUIRE(put.is_ok());
    CHECK(header(*put, "if-none-match") == "*");
    CHECK(header(*put, "Authorization") ==
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20261207/us-east-1/s3/aws4_request, "
          "SignedHeaders=host;if-none-match;x-amz-content-sha256;x-amz-date, "
          "Signature=633f6fa96fdebe6095f4a9ab3a0238a7220204092c421b9ae5e17bd45aa3ac11");
  }

  TEST_CASE("the canonical query: every reserved byte encoded, sorted by name then value") {
    CHECK(s3_canonical_query({{"b", "x y"}, {"a", "2"}, {"a", "1"}, {"uploads", ""}}) == "a=1&a=2&b=x%20y&uploads=");
    CHECK(s3_canonical_query({{"prefix", "ds/x~_.-"}}) == "prefix=ds%2Fx~_.-");
    CHECK(s3_canonical_query({}).empty());
  }

  TEST_CASE("an S3 error body gives its code and message") {
    CHECK(s3_error_text("<?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does "
                        "not exist</Message></Error>") == "NoSuchBucket (The specified bucket does not exist)");
    CHECK(s3_error_text("<Error><Code>SlowDown</Code></Error>") == "SlowDown");
    CHECK(s3_error_text("<html>not found</html>").empty());
  }
}

}  // namespace zrec::io
