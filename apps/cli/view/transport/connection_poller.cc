// ConnectionPoller (see connection_poller.h): one poll(2) loop over the listening socket,
// the stop descriptor, an eventfd for connections given back, and every waiting client.
#include "cli/view/transport/connection_poller.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

namespace zrec::cli::view {

namespace {

// Written with one non-blocking send; a client that cannot take 150 bytes loses them.
constexpr const char* kBusy =
    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 43\r\nConnection: close\r\n\r\n"
    "zrec view: too many connections; try again\n";
constexpr const char* kHeadTooLarge =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain\r\nContent-Length: 38\r\n"
    "Connection: close\r\n\r\nzrec view: request head is too large\n";
constexpr const char* kHeadTimeout =
    "HTTP/1.1 408 Request Timeout\r\nContent-Type: text/plain\r\nContent-Length: 41\r\nConnection: close\r\n\r\n"
    "zrec view: request head came too slowly\n";

void send_canned(int fd, const char* text) { (void)!::send(fd, text, std::strlen(text), MSG_NOSIGNAL | MSG_DONTWAIT); }

void set_low_water(int fd, int bytes) { ::setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes); }

}  // namespace

ConnectionPoller::ConnectionPoller(int listen_fd, int stop_fd, const ServerLimits& limits)
    : listen_fd_(listen_fd), stop_fd_(stop_fd), limits_(limits), peek_buffer_(limits.max_head_bytes + 1) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

ConnectionPoller::~ConnectionPoller() {
  for (int fd : returned_) ::close(fd);  // given back by a worker after run() returned
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void ConnectionPoller::give_back(int fd) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    returned_.push_back(fd);
  }
  const uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void ConnectionPoller::closed() {
  std::lock_guard<std::mutex> lock(mutex_);
  --open_;
}

void ConnectionPoller::close_waiting(Waiting& w, const char* canned_response) {
  if (canned_response != nullptr) send_canned(w.fd, canned_response);
  ::close(w.fd);
  w.fd = -1;
  closed();
}

void ConnectionPoller::accept_all() {
  for (;;) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: none left; EMFILE and the like: try at the next wake
    bool room;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      room = open_ < limits_.max_connections;
      if (room) ++open_;
    }
    if (!room) {
      send_canned(fd, kBusy);
      ::close(fd);
      continue;
    }
    // Performance note: httplib writes a response's head and body in two sends; with
    // Nagle's algorithm the body waited for the client's delayed ACK, 40 ms a request.
    const int on = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    waiting_.push_back({fd, Clock::now() + std::chrono::milliseconds(limits_.idle_timeout_ms), 0});
  }
}

bool ConnectionPoller::examine(Waiting& w, const std::function<void(ReadyConnection)>& dispatch) {
  const ssize_t n = ::recv(w.fd, peek_buffer_.data(), peek_buffer_.size(), MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    close_waiting(w, nullptr);  // the client went away
    return true;
  }
  if (n < 0) return false;
  const std::string_view seen(peek_buffer_.data(), static_cast<size_t>(n));
  const size_t end = seen.find("\r\n\r\n");
  if (end != std::string_view::npos && end + 4 <= limits_.max_head_bytes) {
    set_low_water(w.fd, 1);
    dispatch({w.fd, end + 4});
    w.fd = -1;
    return true;
  }
  if (static_cast<size_t>(n) >= limits_.max_head_bytes) {
    close_waiting(w, kHeadTooLarge);
    return true;
  }
  if (w.peeked == 0) w.deadline = Clock::now() + std::chrono::milliseconds(limits_.head_timeout_ms);
  w.peeked = static_cast<size_t>(n);
  set_low_water(w.fd, static_cast<int>(n) + 1);  // wake again only when more has come
  return false;
}

void ConnectionPoller::run(const std::function<void(ReadyConnection)>& dispatch) {
  std::vector<pollfd> fds;
  for (;;) {
    {
      std::vector<int> back;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        back.swap(returned_);
      }
      for (int fd : back)
        waiting_.push_back({fd, Clock::now() + std::chrono::milliseconds(limits_.idle_timeout_ms), 0});
    }
    const Clock::time_point now = Clock::now();
    Clock::time_point next = now + std::chrono::seconds(60);
    for (Waiting& w : waiting_) {
      if (w.deadline <= now) close_waiting(w, w.peeked > 0 ? kHeadTimeout : nullptr);
      else next = std::min(next, w.deadline);
    }
    std::erase_if(waiting_, [](const Waiting& w) { return w.fd < 0; });

    fds.clear();
    fds.push_back({stop_fd_, POLLIN, 0});
    fds.push_back({listen_fd_, POLLIN, 0});
    fds.push_back({wake_fd_, POLLIN, 0});
    for (const Waiting& w : waiting_) fds.push_back({w.fd, POLLIN, 0});
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    if (fds[0].revents != 0) break;
    if (fds[2].revents != 0) {
      uint64_t count;
      (void)!::read(wake_fd_, &count, sizeof count);
    }
    // Waiting connections first: accept_all() appends to waiting_, past fds' entries.
    for (size_t k = 3; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      examine(waiting_[k - 3], dispatch);
    }
    std::erase_if(waiting_, [](const Waiting& w) { return w.fd < 0; });
    if (fds[1].revents != 0) accept_all();
  }
  for (Waiting& w : waiting_) close_waiting(w, nullptr);
  waiting_.clear();
  std::vector<int> back;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    back.swap(returned_);
  }
  for (int fd : back) {
    ::close(fd);
    closed();
  }
}

}  // namespace zrec::cli::view
