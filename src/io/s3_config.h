// Where s3:// requests go and whose credentials sign them (zrec/remote.h, S3Options):
// the settings the AWS CLI and SDKs read, from the same environment variables and
// files, resolved once per process.
#pragma once

#include <string>

#include "zrec/remote.h"
#include "zrec/status.h"

namespace zrec::io {

struct S3Config {
  std::string endpoint;  // "https://host[:port]" with no path; empty: AWS's own, per bucket
  std::string region;
  bool anonymous = false;  // unsigned requests (a public bucket)
  std::string access_key, secret_key, session_token;
};

// The settings for `options`, its empty fields taken from the environment (resolved on
// the first call for these options, then kept). An error names what is missing or
// malformed and where it was looked for.
Result<S3Config> s3_config(const S3Options& options);

// The environment as s3_config reads it, without the cache: for tests.
Result<S3Config> resolve_s3_config(const S3Options& options);

}  // namespace zrec::io
