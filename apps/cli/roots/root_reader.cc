#include "cli/roots/root_reader.h"

#include <algorithm>

#include "zrec/remote.h"

#include "cli/formats/printable.h"

namespace zrec::cli {

bool is_root(const std::string& path, const GlobalOptions& g) {
  const Context ctx = g.read_context(path);
  if (is_store_dir(path, ctx)) return false;
  auto ds = Dataset::open(path, {}, ctx);
  // A malformed marker still makes a root: open_root() then says what is wrong with it.
  return !ds.is_ok() || ds->marked();
}

namespace {

// The rules for the directory a local root is: every store in it may name a stream, and
// no listed stream is a link or other than a directory (a URL cannot be listed: its
// streams are the marker's, each checked by name).
Status check_layout(const Dataset& ds) {
  const std::string& path = ds.root();
  if (is_url(path)) {
    for (const auto& name : ds.streams())
      if (const std::string why = stream_name_problem(name); !why.empty())
        return invalid_argument("root '" + redact_url(path) + "' lists the stream '" + printable(name) +
                                "', which cannot be a stream: " + why + " (" + kStreamNameRule + ")");
    return Status::ok();
  }
  ZREC_RETURN_IF_ERROR(check_root_streams(path, ds.stores()));
  for (const auto& name : ds.streams())
    if (ds.length() > 0 || is_store_dir(ds.path_of(name))) ZREC_RETURN_IF_ERROR(check_root_stream(path, name));
  return Status::ok();
}

}  // namespace

Result<OpenedRoot> open_root(const std::string& path, const GlobalOptions& g) {
  const std::string shown = redact_url(path);
  Context ctx = g.read_context(path);
  ZREC_ASSIGN_OR_RETURN(const Dataset ds, Dataset::open(path, {}, ctx));
  if (!ds.marked()) return not_found("'" + shown + "' is no root (no " + kRootMarkerFile + " marker)");
  ZREC_RETURN_IF_ERROR(check_layout(ds));
  ctx.snapshot_if_busy = !g.wait;
  OpenedRoot root{path, ds.committed(), {}, ctx};
  const RootState* state = &root.state;
  for (const auto& name : state->streams) {
    const std::string stream = ds.path_of(name);
    // A stream of a root that committed nothing may be gone (append-tar allows it).
    if (state->length == 0 && !is_store_dir(stream, ctx)) continue;
    auto store = ds.open_stream(name, {}, ctx);
    if (!store.is_ok())
      return store.status().with_context("root '" + shown + "' lists the stream '" + printable(name) + "' in " +
                                         kRootMarkerFile);
    if (store.value()->length() < state->length)
      return invalid_argument("stream '" + printable(name) + "' of root '" + shown + "' holds " +
                              std::to_string(store.value()->length()) + " records, fewer than the " +
                              std::to_string(state->length) + " samples it committed");
    root.streams.push_back({name, std::move(store).value()});
  }
  return root;
}

}  // namespace zrec::cli
