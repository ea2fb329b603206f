// build_root (zrec/transfer.h): recompress and concat of roots. A root is published as
// a store is: built whole in a temporary sibling, streams first, the marker last, then
// renamed into place, so a reader (or a crash) never sees a DST without its commit.
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "zrec/dataset.h"
#include "zrec/transfer.h"

#include "store/root_writer.h"
#include "store/temp_sibling.h"

namespace zrec {

namespace {

// The checks before anything is made: names the marker can hold, one length for all.
Result<RootState> planned_state(const std::vector<RootStreamPlan>& streams, const TransferOptions& options) {
  RootState state;
  for (size_t i = 0; i < streams.size(); ++i) {
    const RootStreamPlan& s = streams[i];
    if (const std::string why = stream_name_problem(s.name); !why.empty())
      return invalid_argument("'" + s.name + "' cannot name a stream: " + why);
    if (i > 0 && !(streams[i - 1].name < s.name)) return invalid_argument("streams must be sorted and distinct");
    uint64_t length = 0;
    for (const StreamPart& p : s.parts) length += p.records - skipped_below(options, p.records);
    if (i == 0) state.length = length;
    if (length != state.length)
      return invalid_argument("stream '" + s.name + "' would hold " + std::to_string(length) + " records, and '" +
                              streams[0].name + "' " + std::to_string(state.length));
    state.streams.push_back(s.name);
  }
  return state;
}

}  // namespace

Status build_root(const std::string& dst, const std::vector<RootStreamPlan>& streams, const WriterOptions& writer,
                  const TransferOptions& options, TransferStats* stats, const std::optional<std::string>& card,
                  const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(const RootState state, planned_state(streams, options));
  ZREC_ASSIGN_OR_RETURN(const std::string path, store::absent_build_target(dst));
  // A build of DST killed earlier left its temporary (streams and all): removed where
  // its builder is gone, said where it is not provably zrec's.
  store::remove_abandoned_root_temps(path, ctx.warn);
  ZREC_ASSIGN_OR_RETURN(auto tmp, store::TempSibling::make(path, store::TempKind::kBuild));
  TransferStats local;
  if (stats == nullptr) stats = &local;
  uint64_t stored = 0;
  for (const RootStreamPlan& s : streams) {
    ZREC_RETURN_IF_ERROR(build_store(
        join_path(tmp->path(), s.name), s.create, writer,
        [&](StoreWriter& w) -> Status {
          for (const StreamPart& p : s.parts) {
            TransferOptions part = options;
            part.max_records = p.records;
            ZREC_RETURN_IF_ERROR(append_store(*p.store, w, part, stats, ctx));
          }
          stored += w.stored_bytes();
          return Status::ok();
        },
        ctx));
  }
  stats->stored_bytes = stored;
  if (card) {
    // Synced before the marker is: the directory's rename publishes both.
    const std::string card_path = join_path(tmp->path(), kCardFile);
    ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(card_path, O_WRONLY | O_CREAT | O_EXCL));
    ZREC_RETURN_IF_ERROR(f.pwrite_all(card->data(), card->size(), 0));
    ZREC_RETURN_IF_ERROR(f.sync());
  }
  {
    // Written and synced under a temporary name and linked into place; the lock it
    // holds goes with this scope (nobody else can know the temporary directory).
    ZREC_ASSIGN_OR_RETURN(auto marker, RootWriter::create(tmp->path(), state));
  }
  ZREC_RETURN_IF_ERROR(tmp->rename_to(path, dst, /*no_replace=*/true));
  return store::sync_parent(path, dst);
}

}  // namespace zrec
