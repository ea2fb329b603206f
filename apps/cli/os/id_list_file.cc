// Reading an ID list (see id_list_file.h).
#include "cli/os/id_list_file.h"

#include <algorithm>

#include "cli/formats/selection.h"
#include "cli/os/side_file.h"

namespace zrec::cli {

Result<std::vector<uint64_t>> read_id_list(const std::string& path, const std::string& option, uint64_t length) {
  ZREC_ASSIGN_OR_RETURN(SideInput in, SideInput::open(path, option));
  ZREC_ASSIGN_OR_RETURN(std::vector<uint64_t> ids, read_indices(in.stream(), length));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace zrec::cli
