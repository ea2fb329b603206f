// Tests for how zrec names and joins store URLs (zrec/remote.h, zrec/dataset.h): which
// paths are URLs, what a message may show of one, and where a file name goes.
#include <string>

#include <doctest/doctest.h>

#include "zrec/dataset.h"
#include "zrec/remote.h"

namespace zrec {

TEST_SUITE("remote_url") {
  TEST_CASE("http and https in any case are URLs and local paths are not") {
    for (const char* url : {"http://h/s", "https://h/s", "HTTPS://h/s", "Http://h", "s3://b/s", "S3://b/s"})
      CHECK_MESSAGE(is_url(url), url);
    CHECK(is_s3_url("s3://b/k"));
    CHECK(!is_s3_url("https://b/k"));
    for (const char* path : {"s", "/data/s", "http:/h/s", "ftp://h/s", "file:///s", "./http://h", ""})
      CHECK_MESSAGE(!is_url(path), path);
  }

  TEST_CASE("a message shows no credentials and no query string") {
    CHECK(redact_url("https://h.example/ds/tokens") == "https://h.example/ds/tokens");
    CHECK(redact_url("https://alice:s3cret@h.example:8443/ds/") == "https://h.example:8443/ds/");
    CHECK(redact_url("https://h/ds/meta.zr?X-Amz-Signature=abc&X-Amz-Credential=k") ==
          "https://h/ds/meta.zr?\xE2\x80\xA6");
    CHECK(redact_url("https://user@h/s?token=t#frag") == "https://h/s?\xE2\x80\xA6");
    CHECK(redact_url("http://h?q=1") == "http://h?\xE2\x80\xA6");
    CHECK(redact_url("http://h/a@b/s") == "http://h/a@b/s");  // '@' in the path is no credential
    CHECK(redact_url("tokens/") == "tokens/");                // a local path, unchanged
  }

  TEST_CASE("path parameters are cut as a query is") {
    CHECK(redact_url("http://h/a;jsessionid=S3/s/meta.zr") == "http://h/a;\xE2\x80\xA6/s/meta.zr");
    CHECK(redact_url("http://h/s;v=1") == "http://h/s;\xE2\x80\xA6");
    CHECK(redact_url("http://h/s;v=1?q=2") == "http://h/s;\xE2\x80\xA6?\xE2\x80\xA6");
  }

  TEST_CASE("every URL inside a message is redacted and the rest kept") {
    CHECK(redact_urls_in("cannot open 'http://a:pw@h/s?t=1' (HTTP 404)") ==
          "cannot open 'http://h/s?\xE2\x80\xA6' (HTTP 404)");
    CHECK(redact_urls_in("HTTPS://u:p@h/x and http://h/y?k=v\nnext") ==
          "HTTPS://h/x and http://h/y?\xE2\x80\xA6\nnext");
    CHECK(redact_urls_in("http://u:p@h/end") == "http://h/end");
    CHECK(redact_urls_in("no url here: /data/s?x") == "no url here: /data/s?x");
    CHECK(redact_urls_in("") == "");
  }

  TEST_CASE("a file name goes into the URL's path, before its query") {
    CHECK(join_path("https://h/ds", "meta.zr") == "https://h/ds/meta.zr");
    CHECK(join_path("https://h/ds/", "meta.zr") == "https://h/ds/meta.zr");
    CHECK(join_path("https://h/ds/?token=t", "meta.zr") == "https://h/ds/meta.zr?token=t");
    CHECK(join_path("https://h/ds?token=t", "tokens") == "https://h/ds/tokens?token=t");
    CHECK(join_path(join_path("https://h/ds?token=t", "tokens"), "meta.zr") == "https://h/ds/tokens/meta.zr?token=t");
    CHECK(join_path("local?dir", "meta.zr") == "local?dir/meta.zr");  // a local name may hold '?'
  }

  TEST_CASE("a name from a remote marker stays one segment inside the root") {
    CHECK(join_path("http://h/pub/root?token=t", "%2e%2e%2fprivate") ==
          "http://h/pub/root/%252e%252e%252fprivate?token=t");
    CHECK(join_path("http://h/root?token=t", "x?y=1") == "http://h/root/x%3Fy%3D1?token=t");
    CHECK(join_path("http://h/root?token=t", "x#f") == "http://h/root/x%23f?token=t");
    CHECK(join_path("http://h/root", "a b") == "http://h/root/a%20b");
    CHECK(join_path("http://h/root", "caf\xC3\xA9.v-1_~") == "http://h/root/caf%C3%A9.v-1_~");
    CHECK(join_path("/local/root", "a b") == "/local/root/a b");  // a local path is bytes as given
    CHECK(join_path("s3://b/root", "a b") == "s3://b/root/a b");  // an S3 key is the key as it is
  }
}

}  // namespace zrec
