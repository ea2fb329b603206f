// Side files: the files an option names beside a command's stores and inputs
// (--dict, --stream-dict, --keys, --labels, --vocab, --indices-from, --files-from,
// --against, --resume-file, --manifest, --plan, an LMDB environment's data file). Each is
// a regular file: a FIFO would block open(2) until a writer came, past SIGINT and
// SIGTERM (the open is retried on EINTR), and a device or socket is no file to read
// whole or to keep a length in. So they are opened with O_NONBLOCK, which returns at
// once on a FIFO, and refused by type before a byte is read:
//
//   "--dict 'd.zr' is a FIFO, not a regular file"
//
// "-" (stdin) stays allowed where an option documents it (SideInput).
#pragma once

#include <fcntl.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/status.h"

#include "zrec_support/file.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

// kInvalidArgument "OPTION 'PATH' is a FIFO, not a regular file" (a directory, a
// character device, a block device, a socket, ...): `mode` is the file's st_mode.
Status not_a_regular_side_file(const std::string& path, const std::string& option, mode_t mode);

// Opens the side file `path` that `option` names with `flags` (O_CREAT makes it 0644),
// never blocking, and refuses it unless it is a regular file; the descriptor returned
// blocks as usual (O_NONBLOCK is dropped once the type is known).
Result<io::File> open_side_file(const std::string& path, const std::string& option, int flags = O_RDONLY);

// The whole of the side file `path` that `option` names, at most `max_bytes`
// ("OPTION 'PATH' is larger than N bytes").
Result<std::vector<uint8_t>> read_side_file(const std::string& path, const std::string& option, uint64_t max_bytes);

// Refuses an existing `path` that is not a regular file (stat(2), which never blocks),
// for a side file that another library opens (a join plan, an LMDB data file, a list of
// names); with `pipes`, an anonymous pipe as SideInput accepts one passes too. A path
// that does not exist passes: the opener reports it.
Status check_side_file(const std::string& path, const std::string& option, bool pipes = false);

// A side file read as a stream of lines: "-" is stdin, anything else a regular file
// opened as open_side_file opens it, or an anonymous pipe (bash's <(cmd), /dev/fd/N),
// which is stdin by another name. A named FIFO is refused like a device: nothing says a
// writer will come, and O_NONBLOCK would read one without a writer as empty.
class SideInput {
 public:
  static Result<SideInput> open(const std::string& path, const std::string& option, Control control = {});
  io::InputStream& stream() { return stream_; }

 private:
  SideInput(io::File file, io::InputStream stream) : file_(std::move(file)), stream_(std::move(stream)) {}
  io::File file_;  // owns the descriptor that stream_ reads (none for stdin)
  io::InputStream stream_;
};

}  // namespace zrec::cli
