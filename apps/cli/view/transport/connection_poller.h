// The view server's front door: accepts connections and holds each one, without a
// thread, until its whole request head (request line and headers) has arrived; only then
// is it handed to a worker. A slow or silent client therefore costs a descriptor and a
// poll slot, never a worker, and is closed at its deadline.
//
// Bounds (ServerLimits): at most max_connections open at once (a connection past that
// gets "503" and is closed at once); a connection waits at most idle_timeout_ms for the
// first byte of a request and head_timeout_ms from that byte to the end of the head
// ("408"); a head longer than max_head_bytes gets "431". The head is peeked
// (MSG_PEEK), not read, so the worker's HTTP parser reads it from the socket as sent;
// SO_RCVLOWAT makes poll wake only when more bytes than those already peeked arrive.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "cli/view/http_transport.h"

namespace zrec::cli::view {

struct ReadyConnection {
  int fd = -1;
  size_t head_bytes = 0;  // the request head's length, its blank line included
};

class ConnectionPoller {
 public:
  // Takes ownership of nothing: listen_fd and stop_fd stay the caller's.
  ConnectionPoller(int listen_fd, int stop_fd, const ServerLimits& limits);
  ~ConnectionPoller();

  // Runs on the calling thread until stop_fd becomes readable, calling `dispatch` (which
  // must not block) with each connection whose request head has arrived. On return every
  // connection still held here is closed; those handed out are the workers' to finish.
  void run(const std::function<void(ReadyConnection)>& dispatch);

  // Thread-safe, from a worker: the connection served its request and stays open for the
  // next one (keep-alive), or is closed (the worker closed it). Either way the worker no
  // longer touches fd.
  void give_back(int fd);
  void closed();

 private:
  using Clock = std::chrono::steady_clock;
  struct Waiting {
    int fd = -1;
    Clock::time_point deadline;
    size_t peeked = 0;  // bytes of a request head seen so far (0: none yet)
  };
  void accept_all();
  // Peeks at w's head; true when w leaves the waiting set (dispatched or closed).
  bool examine(Waiting& w, const std::function<void(ReadyConnection)>& dispatch);
  void close_waiting(Waiting& w, const char* canned_response);

  int listen_fd_, stop_fd_;
  int wake_fd_ = -1;  // eventfd: a worker gave a connection back
  ServerLimits limits_;
  std::vector<Waiting> waiting_;
  std::mutex mutex_;  // guards returned_ and open_
  std::vector<int> returned_;
  size_t open_ = 0;  // connections open: waiting here, queued or being served
  std::vector<char> peek_buffer_;
};

}  // namespace zrec::cli::view
