// HTTP range reads of remote store files (remote_file.h, zrec/remote.h): one request at
// a time per connection, connections kept alive in a process-wide pool, every request
// after the first conditional on the validator the first one pinned.
#include "io/remote_file.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstring>
#include <ctime>
#include <mutex>

#include "zrec/lanes.h"
#include "zrec/remote.h"

#include "io/curl_api.h"
#include "io/http_header.h"
#include "io/location.h"
#include "io/s3_config.h"
#include "io/s3_request.h"

namespace zrec {

namespace {

// Counts one more in `field` of options.stats, when the reads are counted.
void count(const RemoteOptions& options, std::atomic<uint64_t> RemoteCounters::*field) {
  if (options.stats) (options.stats.get()->*field).fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

}  // namespace zrec

namespace zrec::io {

namespace {

// Kept-alive connections: a handle keeps its connection between requests, so a lane
// that reads one range after another reuses one connection. Never destroyed: lanes may
// still hold handles while the process exits.
struct HandlePool {
  std::mutex mutex;
  std::vector<CURL*> idle;
};
HandlePool& handle_pool() {
  static auto* pool = new HandlePool;
  return *pool;
}

class PooledHandle {
 public:
  explicit PooledHandle(const LibCurl& api) : api_(api) {
    {
      std::lock_guard lock(handle_pool().mutex);
      if (!handle_pool().idle.empty()) {
        handle_ = handle_pool().idle.back();
        handle_pool().idle.pop_back();
      }
    }
    if (handle_ == nullptr) handle_ = api_.curl_easy_init();
    else api_.curl_easy_reset(handle_);  // options go; the live connection stays
  }
  ~PooledHandle() {
    if (handle_ == nullptr) return;
    std::lock_guard lock(handle_pool().mutex);
    handle_pool().idle.push_back(handle_);
  }
  PooledHandle(const PooledHandle&) = delete;
  PooledHandle& operator=(const PooledHandle&) = delete;
  CURL* get() const { return handle_; }

 private:
  const LibCurl& api_;
  CURL* handle_ = nullptr;
};

// "bytes A-B/TOTAL" (or "bytes */TOTAL") -> its numbers; false when it is neither.
struct ContentRange {
  bool has_range = false;
  uint64_t first = 0, last = 0, total = 0;
};
bool parse_content_range(std::string_view v, ContentRange& out) {
  if (!v.starts_with("bytes ")) return false;
  v.remove_prefix(6);
  const size_t slash = v.find('/');
  if (slash == std::string_view::npos) return false;
  auto number = [](std::string_view s, uint64_t& n) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  if (!number(v.substr(slash + 1), out.total)) return false;
  const std::string_view range = v.substr(0, slash);
  if (range == "*") return true;
  const size_t dash = range.find('-');
  if (dash == std::string_view::npos) return false;
  out.has_range = true;
  return number(range.substr(0, dash), out.first) && number(range.substr(dash + 1), out.last) && out.first <= out.last;
}

// Bytes of a body that is not kept (an error page, a redirect) read before the
// transfer is stopped: enough for any status page's own words, never an endless one.
constexpr uint64_t kMaxDroppedBody = 4 << 10;

bool strong_etag(const std::string& etag) { return !etag.empty() && !etag.starts_with("W/"); }

// One GET of bytes [start, start + want) of a file, or (opening) of its first bytes.
struct Request {
  // asked
  uint64_t start = 0;
  uint64_t want = 0;
  const RemoteFile::Pin* pin = nullptr;  // null: opening, nothing pinned yet
  uint64_t small_file_bytes = 0;
  RemoteCounters* counters = nullptr;  // where the body's bytes count (RemoteOptions::stats); null: nowhere
  // the destination: dst[0, want) (reading), or `body` (opening)
  uint8_t* dst = nullptr;
  std::vector<uint8_t> body;
  // the response
  long status = 0;
  std::string status_text;
  std::string etag, last_modified;
  std::string content_range;
  std::string location;  // a redirect's Location, as sent
  bool has_length = false;
  uint64_t content_length = 0;
  bool judged = false;          // the headers were judged, at the first body byte
  bool keep_body = false;       // 200/206 whose bytes are wanted; other bodies are dropped
  uint64_t dropped = 0;         // bytes of a body not kept (an error page, a redirect's)
  bool dropped_enough = false;  // ... and the transfer was stopped after kMaxDroppedBody of them
  std::string error_body;       // ... the first kMaxDroppedBody of them (an S3 error's XML)
  uint64_t got = 0;             // body bytes kept
  std::string refusal;          // why the transfer was stopped by us (not retried)
  bool changed = false;         // the refusal says the file changed since it was pinned

  // Forgets a redirect's answer before the request goes to its Location.
  void new_response() {
    status = 0;
    status_text.clear();
    etag.clear();
    last_modified.clear();
    content_range.clear();
    location.clear();
    has_length = false;
    content_length = 0;
    judged = keep_body = dropped_enough = false;
    dropped = 0;
    error_body.clear();
  }

  // Decides, once the headers are complete, what the body is.
  bool judge() {
    judged = true;
    if (status != 200 && status != 206) return true;  // an error page: status decides after
    if (pin != nullptr && !pin->etag.empty() && !etag.empty() && etag != pin->etag) {
      refusal = "it changed since it was opened (ETag " + pin->etag + ", now " + etag +
                "): the store was republished while being read";
      changed = true;
      return false;
    }
    if (pin != nullptr && pin->etag.empty() && !pin->last_modified.empty() && !last_modified.empty() &&
        last_modified != pin->last_modified) {
      refusal = "it changed since it was opened (Last-Modified " + pin->last_modified + ", now " + last_modified +
                "): the store was republished while being read";
      changed = true;
      return false;
    }
    if (status == 200) {
      // The server sent the whole file: it ignores Range. A small file is fine whole.
      const uint64_t whole = has_length ? content_length : 0;
      if (pin == nullptr && (!has_length || whole <= small_file_bytes)) {
        keep_body = true;
        return true;
      }
      refusal = "the server ignores Range requests (it answered 200 with the whole " +
                (has_length ? std::to_string(whole) + "-byte " : std::string()) +
                "file); zrec reads remote stores by ranges, which every common web server and object store serves";
      return false;
    }
    ContentRange cr;
    if (!parse_content_range(content_range, cr) || !cr.has_range) {
      refusal = "the server answered 206 with Content-Range '" + content_range + "'";
      return false;
    }
    if (cr.first != start || cr.last >= start + want) {
      refusal = "the server answered bytes " + std::to_string(cr.first) + "-" + std::to_string(cr.last) +
                " to a request for bytes " + std::to_string(start) + "-" + std::to_string(start + want - 1);
      return false;
    }
    if (pin != nullptr && cr.total != pin->size) {
      refusal = "it changed since it was opened (" + std::to_string(pin->size) + " bytes, now " +
                std::to_string(cr.total) + "): the store was republished while being read";
      changed = true;
      return false;
    }
    keep_body = true;
    return true;
  }
};

size_t on_header(char* p, size_t size, size_t count, void* user) {
  auto* r = static_cast<Request*>(user);
  const size_t n = size * count;
  const HeaderLine h = parse_header_line(std::string_view(p, n));
  if (h.starts_response) {  // a new response (after a redirect or a 100): start over
    r->status = h.status;
    r->status_text = h.status_text;
    r->etag.clear();
    r->last_modified.clear();
    r->content_range.clear();
    r->location.clear();
    r->has_length = false;
  } else if (h.is("etag")) {
    r->etag = h.value;
  } else if (h.is("last-modified")) {
    r->last_modified = h.value;
  } else if (h.is("content-range")) {
    r->content_range = h.value;
  } else if (h.is("location")) {
    r->location = h.value;
  } else if (h.is("content-length")) {
    auto [ptr, ec] = std::from_chars(h.value.data(), h.value.data() + h.value.size(), r->content_length);
    r->has_length = ec == std::errc();
  }
  return n;
}

size_t on_body(char* p, size_t size, size_t count, void* user) {
  auto* r = static_cast<Request*>(user);
  const size_t n = size * count;
  if (!r->judged && !r->judge()) return 0;  // stops the transfer (CURLE_WRITE_ERROR)
  if (!r->keep_body) {
    // An error page or a redirect's body says nothing the status does not; a server (a
    // captive portal, a broken proxy) may send one that never ends.
    r->dropped += n;
    if (r->error_body.size() < kMaxDroppedBody)
      r->error_body.append(p, std::min<size_t>(n, kMaxDroppedBody - r->error_body.size()));
    if (r->dropped <= kMaxDroppedBody) return n;
    r->dropped_enough = true;
    return 0;
  }
  if (r->dst == nullptr) {
    const uint64_t cap = r->status == 200 ? r->small_file_bytes : r->want;
    if (r->body.size() + n > cap) {
      r->refusal = r->status == 200 ? "the server ignores Range requests and the file is larger than " +
                                          std::to_string(cap) + " bytes"
                                    : "the server sent more bytes than asked";
      return 0;
    }
    r->body.insert(r->body.end(), p, p + n);
  } else {
    if (r->got + n > r->want) {
      r->refusal = "the server sent more bytes than asked";
      return 0;
    }
    std::memcpy(r->dst + r->got, p, n);
  }
  r->got += n;
  if (r->counters != nullptr) r->counters->bytes.fetch_add(n, std::memory_order_relaxed);
  return n;
}

bool retryable_status(long status) { return status == 429 || status == 408 || (status >= 500 && status <= 599); }

// What one try came to.
struct Outcome {
  enum Kind { kDone, kRetry, kFail } kind = kFail;
  Status status;  // kFail: the error; kRetry: the reason, reported if the tries run out
};

// A request's deadline (RemoteOptions::min_bytes_per_s): a server that keeps sending
// a byte now and then never trips the stall timeout, and must not hold a read forever.
long deadline_ms(const RemoteOptions& options, uint64_t want) {
  const uint64_t base_s = 2 * static_cast<uint64_t>(std::max(options.stall_timeout_s, 1));
  const uint64_t rate = std::max<uint64_t>(options.min_bytes_per_s, 1);
  return static_cast<long>(
      std::min<uint64_t>(base_s * 1000 + want / rate * 1000 + want % rate * 1000 / rate, uint64_t{24} * 3600 * 1000));
}

bool is_redirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

// A redirect's Location read against the URL that answered it (libcurl's URL parser:
// relative references, "..", a scheme-relative "//host/..."); empty if it is no URL.
std::string resolve(const LibCurl& api, const std::string& base, const std::string& location) {
  CURLU* u = api.curl_url();
  if (u == nullptr) return {};
  std::string out;
  char* text = nullptr;
  if (api.curl_url_set(u, CURLUPART_URL, base.c_str(), 0) == CURLUE_OK &&
      api.curl_url_set(u, CURLUPART_URL, location.c_str(), 0) == CURLUE_OK &&
      api.curl_url_get(u, CURLUPART_URL, &text, 0) == CURLUE_OK && text != nullptr)
    out = text;
  api.curl_free(text);
  api.curl_url_cleanup(u);
  return out;
}

// One request to `url`, no redirect followed: for a redirect, `location` is where to.
Outcome perform_once(const LibCurl& api, const std::string& url, const RemoteOptions& options,
                     const CancelToken& cancel, Request& r, std::string& location) {
  PooledHandle handle(api);
  CURL* h = handle.get();
  if (h == nullptr) return {Outcome::kFail, io_error("cannot make a libcurl handle")};
  char errbuf[CURL_ERROR_SIZE] = {};
  const std::string range = std::to_string(r.start) + "-" + std::to_string(r.start + r.want - 1);
  const bool s3 = is_s3_url(url);
  std::string target = url;
  curl_slist* headers = nullptr;
  if (s3) {  // signed afresh for each request (the signature holds its time)
    auto config = s3_config(options.s3);
    if (!config.is_ok()) return {Outcome::kFail, config.status()};
    auto signed_request = s3_get(url, *config, std::time(nullptr));
    if (!signed_request.is_ok()) return {Outcome::kFail, signed_request.status()};
    target = signed_request->url;
    for (const std::string& h : signed_request->headers) headers = api.curl_slist_append(headers, h.c_str());
  }
  if (r.pin != nullptr && strong_etag(r.pin->etag))
    headers = api.curl_slist_append(headers, ("If-Match: " + r.pin->etag).c_str());
  else if (r.pin != nullptr && !r.pin->last_modified.empty())
    headers = api.curl_slist_append(headers, ("If-Unmodified-Since: " + r.pin->last_modified).c_str());
  api.curl_easy_setopt(h, CURLOPT_URL, target.c_str());
  api.curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  api.curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  // Redirects are followed by perform(), which bounds their bodies and refuses https -> http.
  api.curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  api.curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options.connect_timeout_s));
  api.curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
  api.curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.stall_timeout_s));
  api.curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, deadline_ms(options, r.want));
  api.curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  // Performance note: libcurl's default 16 KiB receive buffer made a 147 KiB record ten
  // recv calls and as many callbacks; 256 KiB takes most records whole.
  api.curl_easy_setopt(h, CURLOPT_BUFFERSIZE, 256L << 10);
  api.curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_2TLS));
  api.curl_easy_setopt(h, CURLOPT_USERAGENT, "zrec/" ZREC_VERSION);
  api.curl_easy_setopt(h, CURLOPT_RANGE, range.c_str());
  api.curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
  api.curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
  api.curl_easy_setopt(h, CURLOPT_HEADERDATA, &r);
  api.curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
  api.curl_easy_setopt(h, CURLOPT_WRITEDATA, &r);
  api.curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  if (!options.cacert.empty()) api.curl_easy_setopt(h, CURLOPT_CAINFO, options.cacert.c_str());
  if (cancel.flag != nullptr) {
    api.curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &cancel_on_progress);
    api.curl_easy_setopt(h, CURLOPT_XFERINFODATA, const_cast<CancelToken*>(&cancel));
    api.curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  }
  count(options, &RemoteCounters::requests);
  r.counters = options.stats.get();
  CURLcode code = api.curl_easy_perform(h);
  if (code == CURLE_WRITE_ERROR && r.dropped_enough) code = CURLE_OK;  // the status is all it says
  if (code == CURLE_OK && is_redirect(r.status) && !r.location.empty()) location = resolve(api, target, r.location);
  api.curl_easy_setopt(h, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(nullptr));
  api.curl_easy_setopt(h, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));
  api.curl_slist_free_all(headers);

  if (code == CURLE_ABORTED_BY_CALLBACK) return {Outcome::kFail, Status(StatusCode::kCancelled, "interrupted")};
  if (!r.refusal.empty()) return {Outcome::kFail, io_error(r.refusal)};
  if (code != CURLE_OK) {
    std::string why = errbuf[0] != '\0' ? trim_space(errbuf) : api.curl_easy_strerror(code);
    // libcurl's words may quote the URL: the same redaction as every message.
    why = redact_urls_in(why);
    return {retryable_transfer(code) ? Outcome::kRetry : Outcome::kFail, io_error(why)};
  }
  std::string http = "HTTP " + r.status_text;
  // A bucket says why in its error body: "SignatureDoesNotMatch (...)", "NoSuchBucket".
  const std::string s3_error = s3 ? s3_error_text(r.error_body) : std::string();
  if (!s3_error.empty()) http += ": " + s3_error;
  if (s3 && is_redirect(r.status))  // another region's endpoint: a signed request cannot follow
    return {Outcome::kFail, io_error(http + " (the bucket is served elsewhere: set its region, AWS_REGION)")};
  if (is_redirect(r.status)) {
    if (location.empty())
      return {Outcome::kFail, io_error(r.location.empty() ? http + " without a Location to go to"
                                                          : http + " to '" + redact_url(r.location) + "', no URL")};
    return {Outcome::kDone, Status::ok()};
  }
  if (!r.judged && !r.judge()) return {Outcome::kFail, io_error(r.refusal)};  // an empty body
  if (r.status == 200 || r.status == 206) return {Outcome::kDone, Status::ok()};
  if (r.status == 404 || r.status == 410) return {Outcome::kFail, not_found(http)};
  if ((r.status == 412 || r.status == 416) && r.pin != nullptr) {
    r.changed = true;
    return {Outcome::kFail, io_error(http + ": it changed since it was opened (the store was republished while "
                                            "being read)")};
  }
  if (s3 && r.status == 403 && (s3_error.empty() || s3_error.starts_with("AccessDenied")))
    return {Outcome::kFail, io_error(http + kS3AccessDenied)};
  if (s3 && (r.status == 401 || r.status == 403)) return {Outcome::kFail, io_error(http)};  // keys, clock, token
  if (r.status == 401 || r.status == 403) return {Outcome::kFail, io_error(http + kAccessDenied)};
  if (r.status == 416) return {Outcome::kDone, Status::ok()};  // opening: an empty file (judged by the caller)
  if (retryable_status(r.status)) return {Outcome::kRetry, io_error(http)};
  return {Outcome::kFail, io_error(http)};
}

// One request, following up to options.max_redirects redirects. An https URL is never
// redirected to http: its bytes (and the credentials it carries) would travel in clear.
Outcome perform(const LibCurl& api, const std::string& url, const RemoteOptions& options, const CancelToken& cancel,
                Request& r) {
  const bool secure = is_https_url(url);
  std::string at = url;
  for (int hops = 0;; ++hops) {
    std::string location;
    Outcome o = perform_once(api, at, options, cancel, r, location);
    if (location.empty() || o.kind != Outcome::kDone) return o;
    if (hops == options.max_redirects)
      return {Outcome::kFail, io_error("more than " + std::to_string(options.max_redirects) +
                                       " redirects (the last to '" + redact_url(location) + "')")};
    if (!is_http_url(location))
      return {Outcome::kFail, io_error("HTTP " + r.status_text + " redirects to '" + redact_url(location) +
                                       "', which is not an http:// or https:// URL")};
    if (secure && !is_https_url(location))
      return {Outcome::kFail, io_error("HTTP " + r.status_text + " redirects from https to '" + redact_url(location) +
                                       "': refused, an https URL is read over https only")};
    at = std::move(location);
    r.new_response();
  }
}

std::string tries_note(int tries) { return tries > 1 ? " (after " + std::to_string(tries) + " tries)" : ""; }

}  // namespace

RemoteFile::RemoteFile(std::string url, Pin pin, std::vector<uint8_t> head, RemoteOptions options, CancelToken cancel)
    : url_(std::move(url)),
      shown_(redact_url(url_)),
      pin_(std::move(pin)),
      size_(pin_.size),
      options_(std::move(options)),
      cancel_(cancel),
      head_(std::move(head)) {}

Result<std::unique_ptr<const Readable>> RemoteFile::open(const std::string& url, uint64_t prefetch,
                                                         const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(const LibCurl* api, libcurl());
  const RemoteOptions& options = ctx.remote;
  const CancelToken& cancel = ctx.control.cancel;
  const std::string shown = redact_url(url);
  for (int attempt = 1;; ++attempt) {
    Request r;
    r.want = std::max<uint64_t>(prefetch, 1);
    r.small_file_bytes = options.small_file_bytes;
    Outcome o = perform(*api, url, options, cancel, r);
    if (o.kind == Outcome::kRetry && attempt < options.max_tries) {
      count(options, &RemoteCounters::retries);
      if (!back_off(options, cancel, attempt + 1)) return Status(StatusCode::kCancelled, "interrupted");
      continue;
    }
    if (o.kind != Outcome::kDone) {
      return Status(o.status.code(), "cannot open '" + shown + "': " + o.status.message() + tries_note(attempt));
    }
    Pin pin;
    pin.etag = r.etag;
    if (!strong_etag(r.etag)) pin.last_modified = r.last_modified;
    if (r.status == 416) {
      ContentRange cr;
      if (!parse_content_range(r.content_range, cr) || cr.total != 0)
        return io_error("cannot open '" + shown + "': HTTP " + r.status_text + " to a request for its first bytes");
      pin.size = 0;
      return std::unique_ptr<const Readable>(new RemoteFile(url, std::move(pin), {}, options, cancel));
    }
    if (r.status == 200) {
      pin.size = r.body.size();
    } else {
      ContentRange cr;
      parse_content_range(r.content_range, cr);  // judged at the first byte
      pin.size = cr.total;
      if (r.body.size() != cr.last - cr.first + 1) {
        if (attempt < options.max_tries) continue;  // cut short: once more
        return io_error("cannot open '" + shown + "': the response ended early" + tries_note(attempt));
      }
    }
    return std::unique_ptr<const Readable>(new RemoteFile(url, std::move(pin), std::move(r.body), options, cancel));
  }
}

Status RemoteFile::pread_exact(void* dst, size_t n, uint64_t offset) const {
  auto* out = static_cast<uint8_t*>(dst);
  if (offset > size_ || n > size_ - offset)
    return io_error("cannot read '" + shown_ + "': unexpected end of file at byte " + std::to_string(offset));
  // What the first request fetched.
  if (offset < head_.size()) {
    const size_t k = static_cast<size_t>(std::min<uint64_t>(n, head_.size() - offset));
    std::memcpy(out, head_.data() + offset, k);
    out += k;
    n -= k;
    offset += k;
  }
  if (n == 0) return Status::ok();
  ReadAhead* ahead;
  {
    std::lock_guard lock(ahead_mutex_);
    ahead = &ahead_[std::this_thread::get_id()];  // references survive rehashing
  }
  ReadAhead& ra = *ahead;
  constexpr uint64_t kFirstSpan = 128 << 10, kMaxSpan = 2 << 20, kSmallRead = 64 << 10;
  while (n > 0) {
    const uint64_t held_end = ra.start + ra.bytes.size();
    if (offset >= ra.start && offset < held_end) {
      const size_t k = static_cast<size_t>(std::min<uint64_t>(n, held_end - offset));
      std::memcpy(out, ra.bytes.data() + (offset - ra.start), k);
      out += k;
      n -= k;
      offset += k;
      ra.next = offset;
      continue;
    }
    if (offset != ra.next || n >= kSmallRead) {
      ra.span = kFirstSpan;
      ra.next = offset + n;
      return fetch(out, n, offset);
    }
    const uint64_t want = std::min<uint64_t>(std::max<uint64_t>(n, ra.span), size_ - offset);
    ra.bytes.resize(want);
    ra.start = offset;
    Status s = fetch(ra.bytes.data(), want, offset);
    if (!s.is_ok()) {
      ra.bytes.clear();
      return s;
    }
    ra.span = std::min(kMaxSpan, ra.span * 2);
  }
  return Status::ok();
}

Status RemoteFile::fetch(uint8_t* out, size_t n, uint64_t offset) const {
  ZREC_ASSIGN_OR_RETURN(const LibCurl* api, libcurl());
  const RemoteOptions& options = options_;
  // Tries in a row that made no real progress; a try that received a good part of the
  // rest (kProgressBytes, or all of it) starts the count over, the rest asked for next.
  // A server answering each request with a byte or two (a drip, or 206s of one byte)
  // is no progress: it fails after max_tries like a server that answers nothing. All
  // requests of one read are bounded too, however they went.
  constexpr uint64_t kProgressBytes = 64 << 10;
  int failures = 0, tries = 0;
  const int max_all_tries = 16 * options.max_tries;
  while (n > 0) {
    ++tries;
    Request r;
    r.start = offset;
    r.want = n;
    r.pin = &pin_;
    r.dst = out;
    Outcome o = perform(*api, url_, options, cancel_, r);
    const bool progressed = r.got >= std::min<uint64_t>(n, kProgressBytes);
    // Bytes received before a failure are kept: the next try asks for the rest.
    out += r.got;
    n -= r.got;
    offset += r.got;
    if (o.kind == Outcome::kDone && n == 0) break;
    if (o.kind == Outcome::kDone && progressed && tries < max_all_tries) continue;  // a shorter range than asked
    if (o.kind == Outcome::kDone)
      o = {Outcome::kRetry, io_error(r.got > 0 ? "the server sent " + std::to_string(r.got) +
                                                     " bytes of the range asked, again and again"
                                               : "the response ended early")};
    failures = progressed ? 1 : failures + 1;
    if (o.kind == Outcome::kRetry && failures < options.max_tries && tries < max_all_tries) {
      count(options, &RemoteCounters::retries);
      if (!back_off(options, cancel_, failures + 1)) return Status(StatusCode::kCancelled, "interrupted");
      continue;
    }
    return Status(o.status.code(), "cannot read '" + shown_ + "' (bytes " + std::to_string(offset) + "-" +
                                       std::to_string(offset + n - 1) + "): " + o.status.message() + tries_note(tries));
  }
  return Status::ok();
}

}  // namespace zrec::io
