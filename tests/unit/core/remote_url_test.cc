// Tests for how zrec names and joins store URLs (zrec/remote.h, zrec/dataset.h): which
// paths are URLs, what a message may show of one, and where a file name goes.
#include <string>

#include <doctest/doctest.h>

#include "zrec/dataset.h"
#include "zrec/remote.h"

namespace zrec {

TEST_SUITE("remote_url") {
  TEST_CASE("http and https in any case are URLs and local paths are not") {
    for (const char* url : {"http://h/s", "https://h/s", "HTTPS://h/s", "Http://h"}) CHECK_MESSAGE(is_url(url), url);
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

  TEST_CASE("a file name goes into the URL's path, before its query") {
    CHECK(join_path("https://h/ds", "meta.zr") == "https://h/ds/meta.zr");
    CHECK(join_path("https://h/ds/", "meta.zr") == "https://h/ds/meta.zr");
    CHECK(join_path("https://h/ds/?token=t", "meta.zr") == "https://h/ds/meta.zr?token=t");
    CHECK(join_path("https://h/ds?token=t", "tokens") == "https://h/ds/tokens?token=t");
    CHECK(join_path(join_path("https://h/ds?token=t", "tokens"), "meta.zr") == "https://h/ds/tokens/meta.zr?token=t");
    CHECK(join_path("local?dir", "meta.zr") == "local?dir/meta.zr");  // a local name may hold '?'
  }
}

}  // namespace zrec
