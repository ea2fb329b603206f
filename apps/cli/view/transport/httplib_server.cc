// The module zrec-view-http.so: `zrec view`'s HTTP server on cpp-httplib (see
// http_transport.h for why it is a module). httplib parses requests and writes responses;
// the socket loop is ours (connection_poller.h, deadline_stream.h), because httplib 0.11's
// own loop gives a worker thread to every connection, however slow, and bounds neither
// the number of header lines nor the time a request head may take.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/view/http_transport.h"
#include "cli/view/transport/connection_poller.h"
#include "cli/view/transport/deadline_stream.h"

namespace zrec::cli::view {

namespace {

// httplib's request processing (protected in httplib::Server) on a stream we hand it.
class ViewHttpServer : public httplib::Server {
 public:
  using httplib::Server::process_request;
  // httplib writes a content provider's bytes only while its own server socket is set
  // (it takes an unset one for a server shutting down); this server accepts on
  // `listen_fd` itself, so that socket stands for it. (Never closed by httplib.)
  explicit ViewHttpServer(int listen_fd) { svr_sock_ = listen_fd; }
  ~ViewHttpServer() override { svr_sock_ = INVALID_SOCKET; }
};

std::string status_text(int status) {
  switch (status) {
    case 400:
      return "zrec view: bad request\n";
    case 404:
      return "zrec view: no such page\n";
    case 413:
      return "zrec view: the request has a body; the API takes none\n";
    case 414:
      return "zrec view: request URI too long\n";
    case 416:
      return "zrec view: bad Range header\n";
    default:
      return "zrec view: error " + std::to_string(status) + "\n";
  }
}

void serve_with(ViewHttpServer& server, const ServeConfig& config) {
  HttpHandler* handler = config.handler;
  auto handle = [handler](const httplib::Request& req, httplib::Response& res) {
    HttpRequest request;
    request.method = req.method;
    request.path = req.path;
    for (const auto& [key, value] : req.params) request.params.emplace_back(key, value);
    for (const auto& [key, value] : req.headers) request.headers.emplace_back(key, value);
    HttpResponse response;
    handler->handle(request, response);
    res.status = response.status;
    for (auto& [key, value] : response.headers) res.set_header(key, value);
    if (response.tail.empty()) {
      res.set_content(std::move(response.body), response.content_type);
      return;
    }
    // body then tail, read from where they are; `keep` lives as long as the provider,
    // which the server drops once the response is written.
    auto head = std::make_shared<const std::string>(std::move(response.body));
    const size_t total = head->size() + response.tail.size();
    res.set_content_provider(
        total, response.content_type,
        [head, tail = response.tail, keep = std::move(response.keep)](size_t offset, size_t length,
                                                                      httplib::DataSink& sink) {
          while (length > 0) {
            const bool in_head = offset < head->size();
            const char* from = in_head ? head->data() + offset : tail.data() + (offset - head->size());
            const size_t n = std::min(length, in_head ? head->size() - offset : tail.size() - (offset - head->size()));
            if (!sink.write(from, n)) return false;
            offset += n;
            length -= n;
          }
          return true;
        });
  };
  // Every method reaches the handler, which answers the ones it does not take with 405.
  server.Get(".*", handle);
  server.Post(".*", handle);
  server.Put(".*", handle);
  server.Patch(".*", handle);
  server.Delete(".*", handle);
  server.Options(".*", handle);
  // The server's own refusals (a malformed request, a body too large, no such method).
  server.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // the handler's own message
    res.set_content(status_text(res.status), "text/plain; charset=utf-8");
    return httplib::Server::HandlerResponse::Handled;
  }));
  httplib::Headers headers;
  for (const auto& [key, value] : config.default_headers) headers.emplace(key, value);
  server.set_default_headers(headers);
  server.set_payload_max_length(config.limits.max_body_bytes);
  server.set_keep_alive_timeout(config.limits.idle_timeout_ms / 1000);
}

// Workers never take SIGINT/SIGTERM: the thread in zrec_view_serve does, so the signal's
// self-pipe (stop_fd) and the command's exit status see it.
void block_stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int listen_socket(const ServeConfig& config, std::string* error) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (auto* in = reinterpret_cast<sockaddr_in*>(&addr);
      ::inet_pton(AF_INET, config.address.c_str(), &in->sin_addr) == 1) {
    in->sin_family = AF_INET;
    in->sin_port = htons(config.port);
    len = sizeof(sockaddr_in);
  } else if (auto* in6 = reinterpret_cast<sockaddr_in6*>(&addr);
             ::inet_pton(AF_INET6, config.address.c_str(), &in6->sin6_addr) == 1) {
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(config.port);
    len = sizeof(sockaddr_in6);
  } else {
    *error = "'" + config.address + "' is not a numeric IPv4 or IPv6 address";
    return -1;
  }
  const int fd = ::socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    *error = std::string("cannot make a socket: ") + std::strerror(errno);
    return -1;
  }
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0 || ::listen(fd, 128) != 0) {
    *error =
        "cannot listen on " + config.address + " port " + std::to_string(config.port) + ": " + std::strerror(errno);
    ::close(fd);
    return -1;
  }
  return fd;
}

uint16_t bound_port(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6&>(addr).sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in&>(addr).sin_port);
}

}  // namespace

}  // namespace zrec::cli::view

extern "C" __attribute__((visibility("default"))) int zrec_view_transport_abi() {
  return zrec::cli::view::kTransportAbi;
}

extern "C" __attribute__((visibility("default"))) int zrec_view_serve(const zrec::cli::view::ServeConfig* config,
                                                                      std::string* error) {
  using namespace zrec::cli::view;
  const int listen_fd = listen_socket(*config, error);
  if (listen_fd < 0) return 1;
  ViewHttpServer server(listen_fd);
  serve_with(server, *config);
  ConnectionPoller poller(listen_fd, config->stop_fd, config->limits);

  // The workers: each takes a connection whose head has arrived, serves that one request,
  // and gives the connection back to the poller for the next (keep-alive) or closes it.
  std::mutex mutex;
  std::condition_variable ready;
  std::deque<ReadyConnection> queue;  // at most max_connections: the poller admits no more
  bool stopping = false;
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < config->limits.workers; ++w) {
    workers.emplace_back([&] {
      block_stop_signals();
      for (;;) {
        ReadyConnection c;
        {
          std::unique_lock<std::mutex> lock(mutex);
          ready.wait(lock, [&] { return stopping || !queue.empty(); });
          if (queue.empty()) return;
          c = queue.front();
          queue.pop_front();
        }
        DeadlineStream stream(c.fd, c.head_bytes, config->limits);
        bool keep = false;
        if (stream.head_ok()) {
          bool connection_closed = false;
          bool close_now;
          {
            std::lock_guard<std::mutex> lock(mutex);
            close_now = stopping;
          }
          keep =
              server.process_request(stream, close_now, connection_closed, nullptr) && !connection_closed && !close_now;
        }
        if (keep) {
          poller.give_back(c.fd);
        } else {
          ::shutdown(c.fd, SHUT_RDWR);
          ::close(c.fd);
          poller.closed();
        }
      }
    });
  }
  if (config->on_listening != nullptr) config->on_listening(config->on_listening_context, bound_port(listen_fd));
  poller.run([&](ReadyConnection c) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(c);
    }
    ready.notify_one();
  });
  ::close(listen_fd);
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  ready.notify_all();
  for (std::thread& t : workers) t.join();
  // Connections queued but not yet taken when the workers stopped.
  for (const ReadyConnection& c : queue) ::close(c.fd);
  return 0;
}
