// Remote access in a build without libcurl's headers (ZREC_REMOTE=OFF, CMakeLists.txt):
// the two places where a remote read or request starts refuse every URL with one
// message, so nothing else in the library needs to know how it was built. A URL is
// still recognized (url.cc), so a command given one says why it cannot read it instead
// of looking for a local file of that name.
#include <memory>
#include <string>
#include <string_view>

#include "zrec/remote.h"
#include "zrec/status.h"

#include "io/remote_file.h"
#include "zrec_support/s3_client.h"

namespace zrec {

namespace {

Status unavailable(const std::string& what) {
  return Status(StatusCode::kUnsupported,
                "cannot " + what + ": this zrec was built without remote access (ZREC_REMOTE=OFF)");
}

}  // namespace

namespace io {

Result<std::unique_ptr<const Readable>> RemoteFile::open(const std::string& url, uint64_t, const Context&) {
  return unavailable("open '" + redact_url(url) + "'");
}

}  // namespace io

// An S3Client is never made here, so its other members are never called; they are
// defined because the tools that send requests are linked against them.
S3Client::~S3Client() = default;

Result<std::unique_ptr<S3Client>> S3Client::open(const Context&) { return unavailable("reach a bucket"); }

S3ClientStats S3Client::stats() const { return {requests_.load(), retries_.load(), bytes_sent_.load()}; }

Result<S3Response> S3Client::send(const std::string& s3_url, S3Call, std::string_view, std::initializer_list<long>) {
  return unavailable("send a request to '" + s3_url + "'");
}

}  // namespace zrec
