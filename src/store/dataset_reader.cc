// The reader of a dataset of named streams (zrec/dataset.h, Dataset).
#include <algorithm>

#include "zrec/dataset.h"
#include "zrec/store.h"

#include "io/location.h"
#include "store/stream_alignment.h"

namespace zrec {

namespace {

const RootState& no_state() {
  static const RootState none;
  return none;
}

}  // namespace

Result<Dataset> Dataset::open(const std::string& root, const OpenOptions& options, const Context& ctx) {
  Dataset d;
  d.root_ = root;
  d.options_ = options;
  d.ctx_ = ctx;
  ZREC_ASSIGN_OR_RETURN(d.committed_, read_root_marker(root, ctx));
  // A URL cannot be listed: its stores are the streams its marker names, read above
  // (child_stores would fetch the marker again).
  if (io::Location(root).remote()) {
    if (d.committed_) d.stores_ = d.committed_->streams;
  } else {
    d.stores_ = child_stores(root);
  }
  return d;
}

const std::vector<std::string>& Dataset::streams() const { return committed().streams; }

const RootState& Dataset::committed() const { return committed_ ? *committed_ : no_state(); }

std::vector<std::string> Dataset::unadopted() const {
  std::vector<std::string> out;
  if (!committed_) return out;  // (a remote root's stores are its committed streams)
  for (const auto& name : stores_)
    if (!std::binary_search(committed_->streams.begin(), committed_->streams.end(), name)) out.push_back(name);
  return out;
}

Result<std::unique_ptr<Store>> Dataset::open_stream(const std::string& name, const OpenOptions& options,
                                                    const Context& ctx) const {
  return Store::open(path_of(name), options, ctx);
}

std::vector<StreamProblem> Dataset::problems(const std::map<std::string, uint64_t>& lengths) const {
  if (!committed_) return {};
  return store::stream_alignment(root_, *committed_, stores_, lengths);
}

Result<std::vector<StreamProblem>> Dataset::check() const {
  std::map<std::string, uint64_t> lengths;
  for (const auto& name : stores_) {
    ZREC_ASSIGN_OR_RETURN(std::unique_ptr<Store> store, open_stream(name));
    lengths[name] = store->length();
  }
  return problems(lengths);
}

}  // namespace zrec
