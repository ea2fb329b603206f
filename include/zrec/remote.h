// Stores on web servers and object stores: a store or root given as an http:// or
// https:// URL is read in place with HTTP range requests (docs/remote.md). Reading only:
// every writer refuses a URL. Store::open, read_root_marker and the operations built on
// them take such URLs wherever they take a local path.
//
// Each open takes its RemoteOptions (OpenOptions::remote, VerifyOptions::open.remote, the
// optional argument of is_store_dir / child_stores / read_root_marker): every file of
// the store is read with them.
//
// What a remote read guarantees (docs/remote.md says why):
// - each file's size and validator (ETag, else Last-Modified) are pinned by the first
//   request; every later one is conditional on it (If-Match / If-Unmodified-Since) and
//   its answer is checked against it, so a store republished while it is read fails
//   naming the file, never mixing two versions;
// - connection resets, timeouts, 429 and 5xx are retried with backoff, resuming the
//   part of a range not yet received;
// - credentials and query strings (presigned signatures) never appear in a message:
//   files are named by redact_url().
//
// Example:
//   auto store = zrec::Store::open("https://data.example.org/tokens/", {.remote = {.cacert = "ca.pem"}});
//   ... read as any store ...
//   auto counts = std::make_shared<zrec::RemoteCounters>();
//   auto store = zrec::Store::open(url, {.remote = {.stats = counts}});
//   zrec::RemoteStats s = counts->load();  // requests made, bytes received
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "zrec/context.h"

namespace zrec {

// The lanes for reading the store or root at `path`, decided here once for the library
// and its tools: `requested` (a caller's requested lane count) when > 0; else, for a URL, 8 (its
// lanes mostly wait on the network, so they are not bounded by the CPUs: 32 requests
// in flight hide a round trip of 25 ms at over 1,000 requests a second); else
// read_lane_budget() (zrec/lanes.h).
size_t read_lane_count(std::string_view path, size_t requested = 0);

// Whether `path` names a remote store: it starts with http://, https:// or s3://
// (case-insensitive, as URL schemes are).
bool is_url(std::string_view path);

// Whether `path` is s3://BUCKET/KEY: an object of an S3-compatible bucket, read with
// requests signed by AWS Signature Version 4 (S3Options). Its KEY is the object key as
// it is, not percent-encoded; it has no query string.
bool is_s3_url(std::string_view path);

// `url` as messages show it: scheme://host[:port]/path, without "user:password@",
// with a query string cut to "?…" (a presigned URL's signature is a credential) and
// each path segment's ";parameters" cut to ";…" (a session id).
std::string redact_url(std::string_view url);

// Every http:// or https:// URL inside `text` (a message, a log line) redacted as
// redact_url does; the rest unchanged. A URL ends at whitespace or a quote.
std::string redact_urls_in(std::string_view text);

// How s3:// URLs are read. Empty fields come from the environment, as AWS's own tools and
// SDKs take them (docs/remote.md, "Buckets"): credentials from AWS_ACCESS_KEY_ID /
// AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, else the profile (AWS_PROFILE, else
// "default") in AWS_SHARED_CREDENTIALS_FILE (~/.aws/credentials) and AWS_CONFIG_FILE
// (~/.aws/config); the region from AWS_REGION, AWS_DEFAULT_REGION or the profile, else
// us-east-1; the endpoint from AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL or the profile's
// endpoint_url, else AWS's own (https://BUCKET.s3.REGION.amazonaws.com). A given
// endpoint is addressed path-style (ENDPOINT/BUCKET/KEY), as S3-compatible servers are.
struct S3Options {
  std::string endpoint_url;  // ENDPOINT, as https://HOST[:PORT]; empty: as above
  bool no_sign = false;      // unsigned requests (also AWS_NO_SIGN_REQUEST=true): anonymous, a public bucket
};

// What remote reads cost: requests sent (retries included), response body bytes received,
// and the requests that were retries of a failed one.
struct RemoteStats {
  uint64_t requests = 0;
  uint64_t bytes = 0;
  uint64_t retries = 0;
};

// The same counts as the reads happen (from any lane or read-ahead thread, so atomic).
// A caller hands one to the reads it wants counted together (RemoteOptions::stats: one
// operation's, one job's); nothing is counted for the whole process.
struct RemoteCounters {
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> retries{0};

  RemoteStats load() const {
    return {requests.load(std::memory_order_relaxed), bytes.load(std::memory_order_relaxed),
            retries.load(std::memory_order_relaxed)};
  }
};

struct RemoteOptions {
  std::string cacert;          // a CA bundle file (PEM) to verify servers by; empty: the system's
  int max_tries = 6;           // tries of one request before its error is reported
  int first_backoff_ms = 100;  // wait before the second try; doubled for each later one (capped at 5 s)
  int connect_timeout_s = 15;  // to connect (and finish TLS)
  int stall_timeout_s = 30;    // a transfer receiving nothing for this long is retried
  // Every request has a deadline, whatever arrives meanwhile (a server dripping a byte a
  // second never stalls): 2 * stall_timeout_s (connecting included), plus the bytes asked
  // at this rate. A request past it is retried as a timeout.
  uint64_t min_bytes_per_s = 64 << 10;
  uint64_t small_file_bytes = 1 << 20;  // a server that ignores Range is accepted for files up to this size
  int max_redirects = 5;                // followed by zrec; https is never redirected to http
  S3Options s3;
  // Its flag set: transfers (and the waits between tries) stop with kCancelled; the same
  // CancelToken that stops every other wait (zrec/context.h), e.g. a signal handler's.
  CancelToken cancel = {};
  // Where the reads made with these options count what they cost; null: not counted.
  // The reads of every file opened with them (a store's, a root's marker) count into it.
  std::shared_ptr<RemoteCounters> stats = nullptr;
};

}  // namespace zrec
