// write_behind() (see write_behind.h).
#include "io/write_behind.h"

#include <unistd.h>

namespace zrec::io {

Status write_behind(const File& file, uint64_t& from, uint64_t end) {
  static const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  end -= end % page;
  if (end < from + kWriteBehindBytes) return Status::ok();
  ZREC_RETURN_IF_ERROR(file.start_writeback(from, end - from));
  from = end;
  return Status::ok();
}

}  // namespace zrec::io
