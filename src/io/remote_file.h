// One file of a remote store, read by HTTP range requests (zrec/remote.h,
// docs/remote.md): the remote kind of io::Readable, so the reader reads a remote store
// through the same pread_exact as a local one.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "zrec/context.h"
#include "zrec/remote.h"
#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::io {

class RemoteFile final : public Readable {
 public:
  // GETs the first `prefetch` bytes of `url` (at least one), which pins the file's size
  // and validator; the bytes are kept for later reads (a store's static page, a data
  // file's first frame header). kNotFound for 404 and 410. Reads with ctx.remote; its
  // requests, now and later, stop at ctx.control.cancel.
  static Result<std::unique_ptr<const Readable>> open(const std::string& url, uint64_t prefetch, const Context& ctx);

  // Reads exactly n bytes at offset, with as many requests as it takes (retries resume
  // after the bytes received). Thread-safe: each request takes a connection of the
  // process's pool.
  //
  // Performance note: a request costs a round trip whatever its size, and some readers
  // read small records one by one (verify's pass, a table read piece by piece). So each
  // thread reading this file has a read-ahead buffer: a read under 64 KiB that starts
  // exactly where that thread's last read ended fetches 128 KiB, doubling up to 2 MiB
  // while the thread keeps reading on, and the next reads are served from it. Any other
  // read fetches exactly its bytes, so a random gather transfers no more than it asks
  // (scan reads a remote store's records in ranges of its own, Store::scan). At most
  // 2 MiB per thread and file.
  Status pread_exact(void* dst, size_t n, uint64_t offset) const override;

  Result<uint64_t> size() const override { return size_; }
  const std::string& path() const override { return shown_; }  // redact_url(url)

  struct Pin {
    std::string etag;           // as the server sent it, W/ included
    std::string last_modified;  // the HTTP date, when no strong ETag is sent
    uint64_t size = 0;
  };

 private:
  RemoteFile(std::string url, Pin pin, std::vector<uint8_t> head, RemoteOptions options, CancelToken cancel);
  // Bytes [offset, offset + n) by requests, into dst.
  Status fetch(uint8_t* dst, size_t n, uint64_t offset) const;

  struct ReadAhead {
    uint64_t start = 0;  // bytes [start, start + bytes.size()) of the file
    std::vector<uint8_t> bytes;
    uint64_t next = UINT64_MAX;  // where this thread's last read ended
    uint64_t span = 128 << 10;   // what the next read-ahead fetches
  };
  std::string url_;
  std::string shown_;
  Pin pin_;
  uint64_t size_ = 0;
  RemoteOptions options_;
  CancelToken cancel_;              // the opening operation's (Context::control.cancel): stops its requests
  std::vector<uint8_t> head_;       // bytes [0, head_.size()), fetched at open
  mutable std::mutex ahead_mutex_;  // guards the map; each entry is its thread's alone
  mutable std::unordered_map<std::thread::id, ReadAhead> ahead_;
};

// `bytes` for a URL's path: every byte but the unreserved ones (RFC 3986: letters,
// digits, "-._~") as %XX (upper-case hex), and '/' kept when keep_slashes.
std::string percent_encode(std::string_view bytes, bool keep_slashes);

// Whether `text` starts with http:// or https:// (any case): a web server's URL, where
// is_url (zrec/remote.h) takes s3:// too.
bool is_http_url(std::string_view text);
// Whether `text` starts with https:// (any case).
bool is_https_url(std::string_view text);

// The words a RemoteFile's 401 or 403 failure ends with (access_denied looks for them):
// for a web server, and for a bucket, which answers AccessDenied for a key that does not
// exist as well to whoever may not list it.
inline constexpr const char* kAccessDenied =
    " (access denied: a private bucket needs a presigned URL, or credentials in the URL)";
inline constexpr const char* kS3AccessDenied =
    " (access denied: the credentials may not read this object, or it does not exist and they may not list the "
    "bucket)";

// Whether a RemoteFile error is the server's 401 or 403: a bucket answers 403, not
// 404, for a missing object to whoever may not list it, so a probe for a file that may
// be absent takes it as absence.
bool access_denied(const Status& status);

}  // namespace zrec::io
