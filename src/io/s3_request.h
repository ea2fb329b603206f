// A GET of an s3:// object as an HTTP request (zrec/remote.h): the endpoint's URL of the
// object and the headers that sign it with AWS Signature Version 4, made fresh for each
// request (a signature holds its time and expires after 15 minutes).
#pragma once

#include <ctime>
#include <string>
#include <vector>

#include "zrec/status.h"

#include "io/s3_config.h"

namespace zrec::io {

struct S3Request {
  std::string url;                   // http(s)://ENDPOINT/BUCKET/KEY, the key percent-encoded
  std::vector<std::string> headers;  // "Name: value" lines to send with it
};

// The request for GET s3://BUCKET/KEY (`s3_url`) under `config`, signed at time `now`
// unless the config is anonymous. A URL without a bucket or key is an error.
Result<S3Request> s3_get(const std::string& s3_url, const S3Config& config, std::time_t now);

// The text of an S3 error body's <Code> and <Message> ("NoSuchBucket (The specified
// bucket does not exist)"), or empty when the body holds no <Code>.
std::string s3_error_text(const std::string& body);

}  // namespace zrec::io
