// append-tar's root: the directory of named streams it appends to, opened (locked, its
// streams' writers made) or refused in append-tar's words.
#pragma once

#include <memory>
#include <string>

#include "zrec/dataset.h"
#include "zrec/status.h"
#include "zrec/store_writer.h"

namespace zrec::cli {

// The root, locked, and its streams' writers (zrec/dataset.h), or the refusal of a path
// that is no root append-tar may write: a store, or stores without a marker (unless
// `adopt`: --adopt makes them its streams).
Result<std::unique_ptr<DatasetWriter>> open_tar_root(const std::string& root, bool adopt, const WriterOptions& writer,
                                                     const Context& ctx);

}  // namespace zrec::cli
