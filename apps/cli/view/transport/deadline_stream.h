// cpp-httplib's Stream over one accepted socket, for one request, with the limits httplib
// 0.11 does not keep itself: the head (already known to be complete, see
// connection_poller.h) is read in one piece and served from memory; past it at most
// max_body_bytes more are read; every wait for the socket ends after io_timeout_ms, and
// the whole response must be written within response_timeout_ms.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

#include "cli/view/http_transport.h"

namespace zrec::cli::view {

class DeadlineStream : public httplib::Stream {
 public:
  DeadlineStream(int fd, size_t head_bytes, const ServerLimits& limits);

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return fd_; }

  // False when the head could not be read whole (the client went away).
  bool head_ok() const { return head_ok_; }

 private:
  using Clock = std::chrono::steady_clock;
  // Waits for `events` on the socket until the I/O timeout or `deadline`; true if ready.
  bool wait_for(short events, Clock::time_point deadline) const;

  int fd_;
  ServerLimits limits_;
  std::string head_;
  size_t head_pos_ = 0;
  size_t body_left_;
  bool head_ok_ = false;
  Clock::time_point response_deadline_;
};

}  // namespace zrec::cli::view
