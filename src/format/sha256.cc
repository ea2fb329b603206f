// SHA-256 through OpenSSL's EVP interface. The algorithm is fetched once per process
// (OpenSSL 3 otherwise looks it up in its provider tables at every init, which costs
// more than hashing a 100-byte record).
#include "format/sha256.h"

#include <cstdio>
#include <cstdlib>

#include <openssl/evp.h>

namespace zrec::format {

namespace {

// Allocation failures and a libcrypto without SHA-256 are not recoverable here: every
// caller would have to handle an error that a working install never produces.
[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "zrec: OpenSSL SHA-256: %s failed\n", what);
  std::abort();
}

const EVP_MD* sha256_md() {
  static const EVP_MD* md = [] {
    EVP_MD* fetched = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (fetched == nullptr) fail("EVP_MD_fetch");
    return fetched;
  }();
  return md;
}

}  // namespace

void Sha256::FreeCtx::operator()(evp_md_ctx_st* ctx) const { EVP_MD_CTX_free(ctx); }

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_) fail("EVP_MD_CTX_new");
  reset();
}

void Sha256::reset() {
  if (EVP_DigestInit_ex2(ctx_.get(), sha256_md(), nullptr) != 1) fail("EVP_DigestInit_ex2");
}

void Sha256::update(const void* data, size_t n) {
  if (n > 0 && EVP_DigestUpdate(ctx_.get(), data, n) != 1) fail("EVP_DigestUpdate");
}

Sha256Digest Sha256::finish() {
  Sha256Digest out;
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(ctx_.get(), out.data(), &len) != 1 || len != out.size()) fail("EVP_DigestFinal_ex");
  reset();
  return out;
}

Sha256Digest Sha256::hash(const void* data, size_t n) {
  // One context per thread: hashing many small records then costs no allocation each.
  thread_local Sha256 h;
  h.update(data, n);
  return h.finish();
}

std::string to_hex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(64);
  for (uint8_t b : digest) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

}  // namespace zrec::format
