// Signed requests with bodies to an S3-compatible bucket, for the one writer of buckets,
// `zrec sync` (docs/remote.md, "Publishing to a bucket"): PUT and POST with a body from
// memory, HEAD, GET of a listing, DELETE, each signed with AWS Signature Version 4 under
// the settings readers use (RemoteOptions::s3). Each request is signed afresh for its try
// (a signature holds its time); transport failures, 408, 429 and 5xx are retried with
// backoff as reads are (RemoteOptions), and every other status the caller did not
// accept is an error naming the request and what the bucket said
// ("PUT s3://b/k: HTTP 403 Forbidden: SignatureDoesNotMatch (...)").
//
//
// Only `zrec sync` writes to buckets, so this is the tools' and not installed; it is
// defined in the core (src/io/s3_client.cc, in libzrec) beside the reads, whose
// signing, libcurl loader and retries it shares.
//
//   ZREC_ASSIGN_OR_RETURN(auto s3, zrec::S3Client::open(ctx));
//   ZREC_ASSIGN_OR_RETURN(auto head, s3->send("s3://b/ds/meta.zr", {.method = "HEAD"}, {}, {404}));
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zrec/context.h"
#include "zrec/remote.h"
#include "zrec/status.h"

namespace zrec {

// What one request does besides naming its object.
struct S3Call {
  std::string method = "GET";
  // Query parameters as they are (not encoded): ("uploadId", id), ("partNumber", "3"),
  // ("uploads", "") for a name alone. Encoded and sorted as SigV4 signs them.
  std::vector<std::pair<std::string, std::string>> query = {};
  std::string body_sha256 = {};  // hex SHA-256 of the body; empty: the empty body's (S3Client::send fills it)
  // Headers sent and signed besides host and x-amz-*: ("if-none-match", "*"),
  // ("x-amz-meta-zrec-sha256", hex), ("x-amz-copy-source", "/bucket/key"). Names in lower case.
  std::vector<std::pair<std::string, std::string>> headers = {};
  // The request is the bucket's, not an object's (ListMultipartUploads): the URL's key
  // may be empty.
  bool bucket_level = false;
};

struct S3Response {
  long status = 0;
  std::string etag;         // as sent, quotes included
  uint64_t length = 0;      // Content-Length (HEAD: the object's size)
  std::string zrec_sha256;  // x-amz-meta-zrec-sha256, the digest sync stored with the object
  std::string body;         // the response body (listings, CompleteMultipartUpload's answer), up to 16 MiB
};

// What a client's requests cost so far.
struct S3ClientStats {
  uint64_t requests = 0;    // tries sent
  uint64_t retries = 0;     // tries that repeated a failed one
  uint64_t bytes_sent = 0;  // request body bytes of tries that completed
};

class S3Client {
 public:
  // A client for ctx.remote (its s3 settings resolved now: missing credentials fail
  // here), whose requests and the waits between their tries stop at ctx.control.cancel.
  static Result<std::unique_ptr<S3Client>> open(const Context& ctx);
  ~S3Client();
  S3Client(const S3Client&) = delete;
  S3Client& operator=(const S3Client&) = delete;

  // Sends `call` for s3://BUCKET/KEY with `body` (its SHA-256 computed here), retrying
  // as the top of this file says. A 2xx status, or one of `accept` (404 for a probe, 412
  // for a conditional PUT that lost), comes back as the response; any other is an error.
  // Thread-safe: each call takes a kept-alive connection of the client's pool.
  Result<S3Response> send(const std::string& s3_url, S3Call call, std::string_view body = {},
                          std::initializer_list<long> accept = {});

  S3ClientStats stats() const;

 private:
  S3Client(RemoteOptions options, CancelToken cancel);
  std::string why_head_failed(const std::string& s3_url);
  RemoteOptions options_;
  CancelToken cancel_;
  std::mutex pool_mutex_;
  std::vector<void*> idle_;  // CURL handles, each keeping its connection
  std::atomic<uint64_t> requests_{0}, retries_{0}, bytes_sent_{0};
};

// The text between the first <name> and </name> of `xml` at or after `from`, and where
// it ended (npos when absent): enough for S3's flat listings.
std::string xml_field(const std::string& xml, const std::string& name, size_t from = 0, size_t* end = nullptr);

// The value of x-amz-copy-source naming the object of `s3_url` (s3://BUCKET/KEY):
// "/BUCKET/KEY", the key percent-encoded as in a request's path.
std::string s3_copy_source(const std::string& s3_url);

// The digests an upload is checked by: SHA-256 of a file's bytes (stored with each object
// as x-amz-meta-zrec-sha256, so a rerun skips what is there already) and MD5 (a part's
// ETag, so a resumed upload keeps the parts the bucket holds).
class ContentSha256 {
 public:
  ContentSha256();
  ~ContentSha256();
  ContentSha256(const ContentSha256&) = delete;
  ContentSha256& operator=(const ContentSha256&) = delete;
  void update(const void* data, size_t n);
  std::string finish_hex();  // lower-case hex; the hasher starts over

 private:
  struct State;
  std::unique_ptr<State> state_;
};
std::string md5_hex(const void* data, size_t n);

}  // namespace zrec
