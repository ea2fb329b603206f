// The seam between `zrec view` and its HTTP server, which lives in a module of its own
// (zrec-view-http.so, apps/cli/view/transport/) that only `zrec view` loads.
//
// Why a module: Debian's cpp-httplib is a shared library whose load runs OpenSSL's
// initialisation (OPENSSL_init_ssl, which reads openssl.cnf) and brings libssl and three
// brotli libraries with it. Linked into zrec, every process (`zrec --version`, `zrec cat`
// in a loop) would pay for that at start. Loaded with dlopen by `zrec view` alone, nobody
// else does (docs/architecture.md, "What every process pays").
//
// The module and the program come from one build (same compiler, same libstdc++), so the
// types below cross the boundary as they are; kTransportAbi guards against a module left
// over from another build.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zrec::cli::view {

// Bumped whenever anything in this header changes.
inline constexpr int kTransportAbi = 1;

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "HEAD", "POST", ...
  std::string path;    // percent-decoded, without the query
  HeaderList params;   // the query's parameters, percent-decoded, in order
  HeaderList headers;  // as received
  // The value of header `name` (ASCII case-insensitive), or nullptr when absent.
  const std::string* header(std::string_view name) const {
    for (const auto& [key, value] : headers)
      if (key.size() == name.size() && std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
          }))
        return &value;
    return nullptr;
  }
  // The value of query parameter `name` (the first, when repeated), or nullptr when absent.
  const std::string* param(std::string_view name) const {
    for (const auto& [key, value] : params)
      if (key == name) return &value;
    return nullptr;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  HeaderList headers;  // besides ServeConfig::default_headers
  std::string body;
  // A large body is sent without a copy: `body`, then `tail`, which points into memory
  // that `keep` owns (a record batch and its ByteBudget reservation) until the response
  // has been written, so the bytes a download holds stay counted against the budget.
  std::string_view tail;
  std::shared_ptr<const void> keep;
};

// What the server calls for each request. handle() runs on the server's worker threads,
// up to ServerLimits::workers at once, and must not throw.
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  virtual void handle(const HttpRequest& request, HttpResponse& response) noexcept = 0;
};

// Bounds that keep a slow or hostile client from holding the server's threads or memory.
struct ServerLimits {
  unsigned workers = 8;             // requests handled at once (worker threads)
  unsigned max_connections = 128;   // open connections; past this a new one gets 503 and is closed
  size_t max_head_bytes = 16384;    // request line and headers; more: 431
  size_t max_body_bytes = 4096;     // request body (the API takes none); more: 413
  int idle_timeout_ms = 5000;       // a connection with no request started is closed after this
  int head_timeout_ms = 10000;      // from a request's first byte to its last header: 408 past it
  int io_timeout_ms = 10000;        // one read or write waiting this long fails the connection
  int response_timeout_ms = 60000;  // writing one response may take this long in all
};

struct ServeConfig {
  int abi = kTransportAbi;
  std::string address = "127.0.0.1";  // numeric IPv4 or IPv6 address to listen on
  uint16_t port = 0;                  // 0: a free port the system picks
  ServerLimits limits;
  HeaderList default_headers;  // added to every response, the server's own errors included
  HttpHandler* handler = nullptr;
  // serve() returns once this descriptor becomes readable (a signal's self-pipe).
  int stop_fd = -1;
  // Called once the socket listens, with the port it got, before any request is served.
  void (*on_listening)(void* context, uint16_t port) = nullptr;
  void* on_listening_context = nullptr;
};

// The module's entry points (extern "C", looked up by name with dlsym):
//   int zrec_view_transport_abi(void): kTransportAbi as the module was built.
//   int zrec_view_serve(const ServeConfig* config, std::string* error): listens and
//     serves until config->stop_fd is readable; returns 0, or 1 with *error set (cannot
//     listen: the address is not local, the port is taken).
using TransportAbiFunction = int (*)();
using ServeFunction = int (*)(const ServeConfig* config, std::string* error);
inline constexpr const char* kTransportAbiSymbol = "zrec_view_transport_abi";
inline constexpr const char* kServeSymbol = "zrec_view_serve";

}  // namespace zrec::cli::view
