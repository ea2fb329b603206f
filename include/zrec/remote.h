// Stores on web servers and object stores: a store or root given as an http:// or
// https:// URL is read in place with HTTP range requests (docs/remote.md). Reading only:
// every writer refuses a URL. Store::open, read_root_marker and the operations built on
// them take such URLs wherever they take a local path.
//
// Each operation reads URLs with its Context's RemoteOptions (Context::remote, declared in
// zrec/context.h with the counters of what reads cost): every file of the store is read
// with them, and the Context's cancel token stops their transfers.
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
//   auto store = zrec::Store::open("https://data.example.org/tokens/", {}, {.remote = {.cacert = "ca.pem"}});
//   ... read as any store ...
//   auto counts = std::make_shared<zrec::RemoteCounters>();
//   auto store = zrec::Store::open(url, {}, {.remote = {.stats = counts}});
//   zrec::RemoteStats s = counts->load();  // requests made, bytes received
#pragma once

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

}  // namespace zrec
