// append-stream's records of bytes delimited by a newline (lines) or a NUL: each
// record is the bytes before its delimiter, the delimiter dropped.
#pragma once

#include <string>

#include "zrec/status.h"

#include "cli/import/append_session.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

struct DelimitedInput {
  char delimiter = '\n';
  std::string unit = "line";  // what a record is called in messages ("line 7")
  std::string label;          // the input in messages: "stdin", "'lines.txt'"
  bool skip_empty = false;    // --skip-empty: drop empty records instead of failing
  // Whether a regular file may be read through a mapping (MappedFile) rather than
  // read(2): not where checkpoints publish along the way, as records read from a file
  // that shrank under the mapping are only caught before the end's publication.
  bool may_map = true;
};

// Appends every record of `in` to `s`, in order; the last record may lack its
// delimiter.
//
// Performance note: a regular file is mapped, and its records go to the writer from
// the pages where they lie (no read(2) copy; ~16% of the CPU of appending tiny lines
// to a raw store); anything else is read with large reads straight into the append
// window and cut there, so each byte is copied by the kernel once and by zrec never.
Status read_delimited_records(io::InputStream& in, AppendSession& s, const DelimitedInput& how);

}  // namespace zrec::cli
