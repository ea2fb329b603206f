// Reading tar members in order from files or stdin through libarchive (plain, gzip,
// zstd, xz, bzip2: the compression is detected by content), for append-tar. Several
// inputs, and tars concatenated on one stream (`cat shard-*.tar | zrec append-tar -`),
// read as one sequence of members.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zrec/status.h"

struct archive;

namespace zrec::cli {

struct LibArchive;

struct TarMember {
  std::string path;      // as stored (PAX and GNU long names resolved)
  uint64_t size = 0;     // data bytes
  bool regular = false;  // a regular file (directories, links and devices are not)
  bool directory = false;
  std::string input;  // the tar it came from ("-" for stdin), for messages
};

class TarReader {
 public:
  // `inputs`: tar files, "-" for stdin; none reads stdin.
  explicit TarReader(std::vector<std::string> inputs);
  ~TarReader();
  TarReader(const TarReader&) = delete;
  TarReader& operator=(const TarReader&) = delete;

  // The next member's header; false at the end of the last input. Any unread data of
  // the previous member is skipped.
  Result<bool> next(TarMember& member);
  // Reads up to n bytes of the current member's data; 0 at its end.
  Result<uint64_t> read(uint8_t* dst, uint64_t n);
  // Bytes consumed from the inputs so far (compressed, as read), for progress.
  uint64_t input_bytes() const;

 private:
  Status open_next_input();
  Status error(const std::string& what) const;

  std::vector<std::string> inputs_;
  size_t next_input_ = 0;
  const LibArchive* la_ = nullptr;  // loaded by the first input opened
  struct archive* archive_ = nullptr;
  std::string current_;
  std::string member_path_;
  uint64_t done_inputs_bytes_ = 0;
};

}  // namespace zrec::cli
