// libcurl(), retryable_transfer, cancel_on_progress and back_off (see curl_api.h).
#include "io/curl_api.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <string>

#include "zrec_support/shared_library.h"

namespace zrec::io {

namespace {

// Once, before any thread makes a handle (curl_global_init is not thread-safe; load_once
// runs this once).
Status init_libcurl(const LibCurl& table) {
  if (table.curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return unsupported(std::string("cannot initialize libcurl (") + ZREC_CURL_SONAME + ")");
  return Status::ok();
}

}  // namespace

Result<const LibCurl*> libcurl() {
  // ZREC_CURL_SONAME: the soname of the libcurl zrec was built against (CMake reads it
  // from the library), so the loaded one has the ABI of the headers.
  return SharedLibrary::load_once<LibCurl>(ZREC_CURL_SONAME, "libcurl", "reading a store by URL needs", init_libcurl);
}

bool retryable_transfer(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return true;
    default:
      return false;
  }
}

int cancel_on_progress(void* cancel, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return cancelled(*static_cast<const CancelToken*>(cancel)) ? 1 : 0;
}

bool back_off(const RemoteOptions& options, const CancelToken& cancel, int attempt) {
  int64_t ms = options.first_backoff_ms;
  for (int i = 2; i < attempt && ms < 5000; ++i) ms *= 2;
  ms = std::min<int64_t>(ms, 5000);
  thread_local std::minstd_rand jitter(std::random_device{}());
  ms = ms / 2 + static_cast<int64_t>(jitter() % static_cast<uint64_t>(ms / 2 + 1));
  for (int64_t slept = 0; slept < ms; slept += 20) {
    if (cancelled(cancel)) return false;
    ::usleep(static_cast<useconds_t>(std::min<int64_t>(20, ms - slept) * 1000));
  }
  return true;
}

}  // namespace zrec::io
