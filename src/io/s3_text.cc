// The S3 helpers of zrec_support/s3_client.h that send nothing (a listing's fields, a
// copy's source, the digests a request carries): no libcurl, so they build with
// ZREC_REMOTE=OFF too.
#include <memory>
#include <string>

#include <openssl/evp.h>

#include "format/sha256.h"
#include "io/remote_file.h"
#include "zrec_support/s3_client.h"

namespace zrec {

std::string xml_field(const std::string& xml, const std::string& name, size_t from, size_t* end) {
  const std::string open = "<" + name + ">", close = "</" + name + ">";
  const size_t a = xml.find(open, from);
  const size_t b = a == std::string::npos ? std::string::npos : xml.find(close, a + open.size());
  if (end != nullptr) *end = b == std::string::npos ? std::string::npos : b + close.size();
  return b == std::string::npos ? std::string() : xml.substr(a + open.size(), b - a - open.size());
}

std::string s3_copy_source(const std::string& s3_url) {
  const std::string rest = s3_url.substr(5);  // after "s3://"
  const size_t slash = rest.find('/');
  if (slash == std::string::npos) return "/" + io::percent_encode(rest, true);
  return "/" + io::percent_encode(rest.substr(0, slash), true) + "/" + io::percent_encode(rest.substr(slash + 1), true);
}

struct ContentSha256::State {
  format::Sha256 sha;
};
ContentSha256::ContentSha256() : state_(std::make_unique<State>()) {}
ContentSha256::~ContentSha256() = default;
void ContentSha256::update(const void* data, size_t n) { state_->sha.update(data, n); }
std::string ContentSha256::finish_hex() { return format::to_hex(state_->sha.finish()); }

std::string md5_hex(const void* data, size_t n) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data, n, out, &len, EVP_md5(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < len; ++i) {
    hex += kHex[out[i] >> 4];
    hex += kHex[out[i] & 15];
  }
  return hex;
}

}  // namespace zrec
