// Delimited frames of text (lines, NUL-terminated records), each returned whole: what
// append-stream reads when it needs a line at once (--parse numbers, JSON lines).
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "zrec/status.h"

#include "zrec_support/input_stream.h"

namespace zrec::cli {

// A line is held whole; beyond this it is refused.
constexpr uint64_t kMaxTextLine = uint64_t{1} << 31;
// The first read asks for this much.
constexpr size_t kFrameReadBytes = size_t{1} << 20;

// Delimited frames of text, each returned whole (for --parse, which needs the line).
class FrameReader {
 public:
  FrameReader(io::InputStream& in, char delim) : in_(in), delim_(delim), buf_(kFrameReadBytes) {}

  // The next frame without its delimiter (valid until the next call); nullopt at the
  // end of input. A last frame without a delimiter counts.
  Result<std::optional<std::string_view>> next() {
    for (;;) {
      if (const void* hit = std::memchr(buf_.data() + scan_, delim_, end_ - scan_)) {
        const size_t at = static_cast<const char*>(hit) - buf_.data();
        std::string_view frame(buf_.data() + begin_, at - begin_);
        begin_ = scan_ = at + 1;
        consumed_ += frame.size() + 1;
        return std::optional<std::string_view>(frame);
      }
      scan_ = end_;
      if (eof_) {
        if (begin_ == end_) return std::optional<std::string_view>();
        std::string_view frame(buf_.data() + begin_, end_ - begin_);
        begin_ = scan_ = end_;
        consumed_ += frame.size();
        return std::optional<std::string_view>(frame);
      }
      if (begin_ > 0) {  // move the partial frame to the front
        std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        scan_ -= begin_;
        begin_ = 0;
      }
      if (end_ == buf_.size()) {
        if (buf_.size() >= kMaxTextLine) return invalid_argument("a line is longer than 2 GiB");
        buf_.resize(buf_.size() * 2);
      }
      ZREC_ASSIGN_OR_RETURN(size_t got, in_.read_some(buf_.data() + end_, buf_.size() - end_));
      if (got == 0) eof_ = true;
      end_ += got;
    }
  }

  // Bytes of the frames returned so far, delimiters included.
  uint64_t consumed() const { return consumed_; }

 private:
  io::InputStream& in_;
  const char delim_;
  std::vector<char> buf_;
  size_t begin_ = 0, scan_ = 0, end_ = 0;  // frame start, search start, end of data
  bool eof_ = false;
  uint64_t consumed_ = 0;
};

}  // namespace zrec::cli
