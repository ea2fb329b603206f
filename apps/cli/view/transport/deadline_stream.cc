// DeadlineStream (see deadline_stream.h).
#include "cli/view/transport/deadline_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

namespace zrec::cli::view {

namespace {

void address_of(const sockaddr_storage& addr, std::string& ip, int& port) {
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(addr);
    ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
    port = ntohs(in.sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto& in6 = reinterpret_cast<const sockaddr_in6&>(addr);
    ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
    port = ntohs(in6.sin6_port);
  }
  ip = text;
}

}  // namespace

DeadlineStream::DeadlineStream(int fd, size_t head_bytes, const ServerLimits& limits)
    : fd_(fd), limits_(limits), body_left_(limits.max_body_bytes) {
  // The head is in the socket's buffer already (the poller peeked it): one read, bounded
  // by the I/O timeout all the same.
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(limits_.io_timeout_ms);
  head_.resize(head_bytes);
  size_t got = 0;
  while (got < head_bytes) {
    const ssize_t n = ::recv(fd_, head_.data() + got, head_bytes - got, MSG_DONTWAIT);
    if (n > 0) {
      got += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      if (!wait_for(POLLIN, deadline)) return;
    } else {
      return;
    }
  }
  head_ok_ = true;
  response_deadline_ = Clock::now() + std::chrono::milliseconds(limits_.response_timeout_ms);
}

bool DeadlineStream::wait_for(short events, Clock::time_point deadline) const {
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd_, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, limits_.io_timeout_ms)));
    if (r > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
    if (r == 0 || errno != EINTR) return false;
  }
}

bool DeadlineStream::is_readable() const {
  if (head_pos_ < head_.size()) return true;
  return body_left_ > 0 && wait_for(POLLIN, Clock::now() + std::chrono::milliseconds(limits_.io_timeout_ms));
}

bool DeadlineStream::is_writable() const {
  return wait_for(POLLOUT,
                  std::min(response_deadline_, Clock::now() + std::chrono::milliseconds(limits_.io_timeout_ms)));
}

ssize_t DeadlineStream::read(char* ptr, size_t size) {
  if (head_pos_ < head_.size()) {
    const size_t n = std::min(size, head_.size() - head_pos_);
    std::copy_n(head_.data() + head_pos_, n, ptr);
    head_pos_ += n;
    return static_cast<ssize_t>(n);
  }
  // A body: the API takes none, so a small one is read and anything more fails the request.
  if (body_left_ == 0) return -1;
  const Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(limits_.io_timeout_ms);
  for (;;) {
    const ssize_t n = ::recv(fd_, ptr, std::min(size, body_left_), MSG_DONTWAIT);
    if (n >= 0) {
      body_left_ -= static_cast<size_t>(n);
      return n;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    if (!wait_for(POLLIN, deadline)) return -1;
  }
}

ssize_t DeadlineStream::write(const char* ptr, size_t size) {
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(fd_, ptr + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) return -1;
    if (!is_writable()) return -1;  // a reader too slow for the I/O timeout or the response deadline
  }
  return static_cast<ssize_t>(size);
}

void DeadlineStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, ip, port);
}

void DeadlineStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) address_of(addr, ip, port);
}

}  // namespace zrec::cli::view
