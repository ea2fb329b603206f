// S3Client (see zrec_support/s3_client.h): one libcurl easy handle per request in flight, taken from
// the client's pool so a lane's requests reuse one connection.
#include "zrec_support/s3_client.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <ctime>

#include <openssl/evp.h>

#include "format/sha256.h"
#include "io/curl_api.h"
#include "io/http_header.h"
#include "io/remote_file.h"
#include "io/s3_config.h"
#include "io/s3_request.h"

namespace zrec {

using io::libcurl;
using io::LibCurl;
using io::S3Config;
using io::S3Request;

namespace {

constexpr size_t kMaxResponseBody = 16 << 20;

// One try's exchange: the body going out, the answer coming back.
struct Exchange {
  std::string_view out;
  size_t sent = 0;
  S3Response response;
  std::string status_text;
  bool too_long = false;
};

size_t on_header(char* p, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t n = size * count;
  const io::HeaderLine h = io::parse_header_line(std::string_view(p, n));
  if (h.starts_response) {  // a new response (after a 100 Continue): start over
    x->response = S3Response{};
    x->response.status = h.status;
    x->status_text = h.status_text;
  } else if (h.is("etag")) {
    x->response.etag = h.value;
  } else if (h.is("x-amz-meta-zrec-sha256")) {
    x->response.zrec_sha256 = h.value;
  } else if (h.is("content-length")) {
    std::from_chars(h.value.data(), h.value.data() + h.value.size(), x->response.length);
  }
  return n;
}

size_t on_body(char* p, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t n = size * count;
  if (x->response.body.size() + n > kMaxResponseBody) {
    x->too_long = true;
    return 0;
  }
  x->response.body.append(p, n);
  return n;
}

size_t on_read(char* p, size_t size, size_t count, void* user) {
  auto* x = static_cast<Exchange*>(user);
  const size_t n = std::min(size * count, x->out.size() - x->sent);
  std::memcpy(p, x->out.data() + x->sent, n);
  x->sent += n;
  return n;
}

}  // namespace

S3Client::S3Client(RemoteOptions options, CancelToken cancel) : options_(std::move(options)), cancel_(cancel) {}

S3Client::~S3Client() {
  auto api = libcurl();
  if (!api.is_ok()) return;
  for (void* h : idle_) (*api)->curl_easy_cleanup(static_cast<CURL*>(h));
}

Result<std::unique_ptr<S3Client>> S3Client::open(const Context& ctx) {
  ZREC_RETURN_IF_ERROR(libcurl().status());
  ZREC_RETURN_IF_ERROR(io::s3_config(ctx.remote.s3).status());
  return std::unique_ptr<S3Client>(new S3Client(ctx.remote, ctx.control.cancel));
}

// A HEAD's answer has no body, so no <Code>: a GET of the object's first byte, signed
// the same way, is answered with the bucket's reason ("SignatureDoesNotMatch ...").
std::string S3Client::why_head_failed(const std::string& s3_url) {
  S3Call probe{.method = "GET", .headers = {{"range", "bytes=0-0"}}};
  auto answer = send(s3_url, probe, {}, {400, 401, 403, 404});
  if (!answer.is_ok()) return {};
  const std::string said = io::s3_error_text(answer->body);
  return said.empty() ? std::string() : ": " + said;
}

S3ClientStats S3Client::stats() const { return {requests_.load(), retries_.load(), bytes_sent_.load()}; }

Result<S3Response> S3Client::send(const std::string& s3_url, S3Call call, std::string_view body,
                                  std::initializer_list<long> accept) {
  ZREC_ASSIGN_OR_RETURN(const LibCurl* api, libcurl());
  ZREC_ASSIGN_OR_RETURN(const S3Config config, io::s3_config(options_.s3));
  if (!body.empty() || call.method == "PUT" || call.method == "POST")
    call.body_sha256 = format::to_hex(format::Sha256::hash(body.data(), body.size()));
  const std::string what = call.method + " " + s3_url;
  CURL* h = nullptr;
  {
    std::lock_guard lock(pool_mutex_);
    if (!idle_.empty()) {
      h = static_cast<CURL*>(idle_.back());
      idle_.pop_back();
    }
  }
  if (h == nullptr) h = api->curl_easy_init();
  if (h == nullptr) return io_error(what + ": cannot make a libcurl handle");
  struct Return {  // the handle goes back to the pool however send ends
    S3Client* client;
    CURL* h;
    ~Return() {
      std::lock_guard lock(client->pool_mutex_);
      client->idle_.push_back(h);
    }
  } give_back{this, h};
  for (int attempt = 1;; ++attempt) {
    ZREC_ASSIGN_OR_RETURN(const S3Request request, io::s3_sign(s3_url, call, config, std::time(nullptr)));
    api->curl_easy_reset(h);
    curl_slist* headers = nullptr;
    for (const std::string& line : request.headers) headers = api->curl_slist_append(headers, line.c_str());
    headers = api->curl_slist_append(headers, "Expect:");  // no 100-continue round trip per part
    Exchange x;
    x.out = body;
    char errbuf[CURL_ERROR_SIZE] = {};
    api->curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
    api->curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    api->curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    api->curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options_.connect_timeout_s));
    api->curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    api->curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.stall_timeout_s));
    api->curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    api->curl_easy_setopt(h, CURLOPT_USERAGENT, "zrec/" ZREC_VERSION);
    api->curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);
    api->curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &on_header);
    api->curl_easy_setopt(h, CURLOPT_HEADERDATA, &x);
    api->curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &on_body);
    api->curl_easy_setopt(h, CURLOPT_WRITEDATA, &x);
    api->curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    if (call.method == "HEAD") {
      api->curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    } else if (call.method == "PUT" || call.method == "POST") {
      // UPLOAD sends the body by on_read with its length; the method is then named.
      api->curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
      api->curl_easy_setopt(h, CURLOPT_READFUNCTION, &on_read);
      api->curl_easy_setopt(h, CURLOPT_READDATA, &x);
      api->curl_easy_setopt(h, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(body.size()));
      api->curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, call.method.c_str());
    } else if (call.method != "GET") {
      api->curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, call.method.c_str());
    }
    if (!options_.cacert.empty()) api->curl_easy_setopt(h, CURLOPT_CAINFO, options_.cacert.c_str());
    if (cancel_.flag != nullptr) {
      api->curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &io::cancel_on_progress);
      api->curl_easy_setopt(h, CURLOPT_XFERINFODATA, const_cast<CancelToken*>(&cancel_));
      api->curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    }
    requests_.fetch_add(1, std::memory_order_relaxed);
    const CURLcode code = api->curl_easy_perform(h);
    api->curl_easy_setopt(h, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(nullptr));
    api->curl_easy_setopt(h, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));
    api->curl_slist_free_all(headers);
    if (code == CURLE_ABORTED_BY_CALLBACK) return Status(StatusCode::kCancelled, "interrupted");
    std::string why;
    bool again = false;
    if (x.too_long) {
      why = "the response body is longer than " + std::to_string(kMaxResponseBody) + " bytes";
    } else if (code != CURLE_OK) {
      why = redact_urls_in(errbuf[0] != '\0' ? io::trim_space(errbuf) : api->curl_easy_strerror(code));
      again = io::retryable_transfer(code);
    } else {
      bytes_sent_.fetch_add(x.sent, std::memory_order_relaxed);
      const long s = x.response.status;
      if ((s >= 200 && s <= 299) || std::find(accept.begin(), accept.end(), s) != accept.end())
        return std::move(x.response);
      why = "HTTP " + x.status_text;
      if (const std::string said = io::s3_error_text(x.response.body); !said.empty()) why += ": " + said;
      else if (call.method == "HEAD" && (s == 400 || s == 401 || s == 403)) why += why_head_failed(s3_url);
      again = s == 408 || s == 429 || (s >= 500 && s <= 599);
    }
    if (!again || attempt >= options_.max_tries) {
      const std::string tries = attempt > 1 ? " (after " + std::to_string(attempt) + " tries)" : "";
      return io_error(what + ": " + why + tries);
    }
    retries_.fetch_add(1, std::memory_order_relaxed);
    if (!io::back_off(options_, cancel_, attempt + 1)) return Status(StatusCode::kCancelled, "interrupted");
  }
}

}  // namespace zrec
