// Requests of s3:// objects as HTTP requests (zrec/remote.h): the endpoint's URL of the
// object and the headers that sign it with AWS Signature Version 4, made fresh for each
// request (a signature holds its time and expires after 15 minutes). GETs for readers;
// PUT, POST, HEAD and DELETE with a body's hash and a query string for `zrec sync`.
#pragma once

#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "zrec/status.h"

#include "io/s3_config.h"
#include "zrec_support/s3_client.h"

namespace zrec::io {

struct S3Request {
  std::string url;                   // http(s)://ENDPOINT/BUCKET/KEY[?QUERY], the key percent-encoded
  std::vector<std::string> headers;  // "Name: value" lines to send with it
};

// The request for `call` on s3://BUCKET/KEY (`s3_url`) under `config`, signed at time
// `now` unless the config is anonymous. A URL without a bucket, or without a key for an
// object's request, is an error.
Result<S3Request> s3_sign(const std::string& s3_url, const S3Call& call, const S3Config& config, std::time_t now);

// s3_sign of a plain GET.
Result<S3Request> s3_get(const std::string& s3_url, const S3Config& config, std::time_t now);

// The canonical query string of SigV4: each name and value percent-encoded (every byte
// but the unreserved ones, '/' too), sorted by name then value, "name=value" joined by '&'.
std::string s3_canonical_query(std::vector<std::pair<std::string, std::string>> query);

// The text of an S3 error body's <Code> and <Message> ("NoSuchBucket (The specified
// bucket does not exist)"), or empty when the body holds no <Code>.
std::string s3_error_text(const std::string& body);

}  // namespace zrec::io
