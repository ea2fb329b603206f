// append-tar's root (see tar_root.h).
#include "cli/import/tar_root.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "zrec/dataset.h"
#include "zrec/store.h"

#include "cli/formats/printable.h"
#include "cli/report/console.h"
#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

// A directory of stores without a marker: append-tar changes nothing in it.
Status unmarked(const std::string& root, const std::vector<std::string>& stores) {
  std::string list, lengths;
  std::optional<uint64_t> common;
  bool agree = true;
  for (const auto& name : stores) {
    list += (list.empty() ? "" : ", ") + printable(name);
    auto store = Store::open(join_path(root, name), {}, {.snapshot_if_busy = true});
    if (!store.is_ok()) continue;
    const uint64_t n = store.value()->length();
    lengths += (lengths.empty() ? "" : ", ") + printable(name) + " " + std::to_string(n);
    if (common && *common != n) agree = false;
    common = n;
  }
  return invalid_argument(
      "'" + root + "' holds stores (" + list + ") but no " + kRootMarkerFile +
      " marker: it is not a root that append-tar built, and append-tar changes nothing in it. To "
      "make these stores its streams (record i of each is sample i), run again with --adopt, "
      "which needs their lengths to agree (" +
      (agree && common ? "they do: " + std::to_string(*common) + " records each" : "now: " + lengths) + ")");
}

}  // namespace

// The root, locked, and its streams' writers (zrec/dataset.h), or the refusal of a path
// that is no root append-tar may write: a store, or stores without a marker (unless
// --adopt). These two are told here first, in append-tar's words.
Result<std::unique_ptr<DatasetWriter>> open_tar_root(const std::string& root, bool adopt, const WriterOptions& writer,
                                                     const Context& ctx) {
  if (is_store_dir(root))
    return invalid_argument("'" + root +
                            "' is a store; append-tar appends to a directory of named streams "
                            "(ROOT/<ext>), e.g. a new directory");
  if (!adopt) {
    const auto dataset = Dataset::open(root);
    if (dataset.is_ok() && !dataset->marked() && !dataset->stores().empty()) return unmarked(root, dataset->stores());
  }
  ZREC_ASSIGN_OR_RETURN(std::unique_ptr<DatasetWriter> dataset,
                        DatasetWriter::open(root, {.writer = writer, .adopt = adopt}, ctx));
  if (adopt && dataset->marked() && !dataset->stream_names().empty())
    spdlog::info("adopted '{}' as a root of {} streams of {} samples", root, dataset->stream_names().size(),
                 dataset->committed_length());
  return dataset;
}

}  // namespace zrec::cli
