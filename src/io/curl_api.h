// libcurl, loaded when a process first reads a remote store (zrec/remote.h), not by
// every process that links the core: libcurl brings a dozen more libraries (nghttp2,
// ssh, ldap, kerberos, ...) whose loading every `zrec info` of a local store would pay
// (docs/architecture.md, "What every process pays"), and a program built on libzrec.a
// needs no libcurl to link. The calls go through the table below; the types and
// constants are libcurl's own, from its headers.
#pragma once

#ifdef ZREC_REMOTE_OFF
#error "a build with ZREC_REMOTE=OFF has no libcurl: only the files of ZREC_CURL_SOURCES (CMakeLists.txt) use it"
#endif

#include <atomic>

#include <curl/curl.h>

#include "zrec/context.h"
#include "zrec/remote.h"
#include "zrec/status.h"

#include "zrec_support/shared_library.h"

namespace zrec::io {

// Every libcurl function zrec calls: X(name).
#define ZREC_CURL_FUNCTIONS(X) \
  X(curl_global_init)          \
  X(curl_easy_init)            \
  X(curl_easy_cleanup)         \
  X(curl_easy_reset)           \
  X(curl_easy_setopt)          \
  X(curl_easy_perform)         \
  X(curl_easy_getinfo)         \
  X(curl_easy_strerror)        \
  X(curl_slist_append)         \
  X(curl_slist_free_all)       \
  X(curl_url)                  \
  X(curl_url_set)              \
  X(curl_url_get)              \
  X(curl_url_cleanup)          \
  X(curl_free)

struct LibCurl {
  ZREC_SHARED_LIBRARY_TABLE(LibCurl, ZREC_CURL_FUNCTIONS)
};

// The loaded and initialized library, on the first call (thread-safe); an error naming
// the library and the loader's reason when it cannot be loaded.
Result<const LibCurl*> libcurl();

// Transport failures worth another try (the connection or the server had a moment), for
// every remote reader and writer alike.
bool retryable_transfer(CURLcode code);

// Whether the token's flag is set (its wake descriptor is for waits that sleep in poll).
inline bool cancelled(const CancelToken& cancel) {
  return cancel.flag != nullptr && cancel.flag->load(std::memory_order_relaxed) != 0;
}

// A CURLOPT_XFERINFOFUNCTION that ends the transfer once the flag of the CancelToken its
// CURLOPT_XFERINFODATA points to is set.
int cancel_on_progress(void* cancel, curl_off_t, curl_off_t, curl_off_t, curl_off_t);

// Sleeps before try `attempt` (2, 3, ...) of a request: first_backoff_ms, doubled for each
// later try, at most 5 s, jittered to between half and all of it so that many lanes
// throttled at once (a bucket's 503 SlowDown) do not come back at once. False, early,
// when cancel's flag is set.
bool back_off(const RemoteOptions& options, const CancelToken& cancel, int attempt);

}  // namespace zrec::io
