// Buffered sequential reader over a file descriptor (a file, a pipe, stdin).
// Large reads (1 MiB buffer by default); reads larger than the buffer go straight
// to the destination. EINTR is retried, unless cancelled (the Control given at
// construction). Never allocates beyond its buffer.
//
// The tools' reader of their inputs (.npy files, lists of names, stdin); the core does
// not use it, so it is not installed.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/status.h"

namespace zrec::io {

class InputStream {
 public:
  // Does not take ownership of `fd`. `name` is used in error messages ("'-'" for stdin).
  // `control`'s cancel token makes reads stop with kCancelled ("interrupted while
  // reading '<name>'"): checked before each read(2), after a signal interrupts a wait
  // (EINTR), and while waiting for input (its wake_fd). A stream reports no progress
  // (position() says how far it is). The default Control never cancels.
  InputStream(int fd, std::string name, Control control = {}, size_t buffer_bytes = 1 << 20);

  // Opens `path` for reading ("-" means stdin). The stream owns a descriptor it opened.
  static Result<InputStream> open(const std::string& path, Control control = {});

  InputStream(InputStream&&) noexcept;
  InputStream& operator=(InputStream&&) noexcept;
  InputStream(const InputStream&) = delete;
  InputStream& operator=(const InputStream&) = delete;
  ~InputStream();

  // Reads up to n bytes; returns how many were read, 0 only at end of input.
  Result<size_t> read_some(void* dst, size_t n);

  // Reads exactly n bytes. Returns the number read (== n) or, if input ends first,
  // the smaller count read so far (the caller decides whether that is "truncated").
  Result<size_t> read_full(void* dst, size_t n);

  // Skips n bytes: returns how many were skipped (fewer only at the end of input).
  // In a regular file it seeks (up to the file's end) instead of reading them.
  Result<uint64_t> skip(uint64_t n);
  // Whether skip() seeks (a regular file) rather than reads what it skips.
  bool seeks() const;

  // True when no byte is left (may block on a pipe until one arrives or EOF).
  Result<bool> at_eof();

  // Total bytes consumed by the caller so far (the offset of the next byte).
  uint64_t position() const { return position_; }
  const std::string& name() const { return name_; }
  int fd() const { return fd_; }

 private:
  Status fill();  // refill buffer_ when empty

  int fd_ = -1;
  bool owns_fd_ = false;
  std::string name_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0, end_ = 0;  // unread bytes are buffer_[begin_, end_)
  bool eof_ = false;
  uint64_t position_ = 0;
  Control control_;
};

}  // namespace zrec::io
