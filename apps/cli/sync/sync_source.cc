// examine_source (see sync_source.h): the library's verify_store per store, and the
// store's file names from its report (data_shards, codec), never from a listing.
#include "cli/sync/sync_source.h"

#include "zrec/dataset.h"
#include "zrec/format.h"
#include "zrec/verify.h"

namespace zrec::cli {

namespace {

struct StoreFacts {
  uint32_t shards = 0;
  bool dict = false;
  bool codec_pending = false;  // zrec-codec-auto: the first append still chooses the codec
  uint64_t length = 0;
};

Result<StoreFacts> check_store(const std::string& path, bool decode, const GlobalOptions& global, uint64_t& decoded) {
  VerifyOptions options;
  options.quick = !decode;
  options.max_errors = 1;
  auto report = verify_store(path, options, global.read_context(path));
  if (!report.is_ok()) return Status(report.status().code(), "cannot check the source: " + report.status().message());
  if (!report->valid()) {
    const VerifyProblem& p = report->problems.front();
    return invalid_argument("'" + redact_url(path) + "' is not sound (" + p.rule + ": " + p.message +
                            "): nothing was copied; `zrec verify` lists its problems");
  }
  decoded += report->records_decoded;
  return StoreFacts{report->data_shards, report->codec == Codec::kZstdDict, report->codec_pending, report->length};
}

void add_store_files(const std::string& prefix, const StoreFacts& s, std::vector<SyncFile>& data,
                     std::vector<SyncFile>& heads) {
  for (uint32_t i = 0; i < s.shards; ++i) data.push_back({prefix + data_file_name(i), true, false});
  if (s.dict) heads.push_back({prefix + kDictFile, false, false});
  // Before meta.zr, as create writes it: a reader never sees the empty store without it.
  if (s.codec_pending) heads.push_back({prefix + kCodecAutoFile, false, false});
  heads.push_back({prefix + kMetaFile, false, false});
}

}  // namespace

Result<SyncSource> examine_source(const std::string& path, bool decode, const GlobalOptions& global) {
  SyncSource src;
  src.path = path;
  std::vector<SyncFile> data, heads;
  if (is_store_dir(path, global.read_context(path))) {
    ZREC_ASSIGN_OR_RETURN(const StoreFacts s, check_store(path, decode, global, src.records_decoded));
    src.length = s.length;
    add_store_files("", s, data, heads);
  } else {
    ZREC_ASSIGN_OR_RETURN(const Dataset ds, Dataset::open(path, {}, global.read_context(path)));
    if (!ds.marked())
      return not_found("'" + redact_url(path) + "' is neither a store (no meta.zr) nor a root (no zrec-root marker)");
    const RootState& state = ds.committed();
    src.root = true;
    src.length = state.length;
    src.streams = state.streams;
    for (const std::string& name : state.streams) {
      const std::string stream = join_path(path, name);
      ZREC_ASSIGN_OR_RETURN(const StoreFacts s, check_store(stream, decode, global, src.records_decoded));
      if (s.length < state.length)
        return invalid_argument("'" + redact_url(stream) + "' holds " + std::to_string(s.length) +
                                " records, fewer than the root's " + std::to_string(state.length) +
                                " samples: nothing was copied");
      add_store_files(name + "/", s, data, heads);
    }
  }
  src.files = std::move(data);
  // The dataset card (zrec card) travels with the data: after the data files, before the
  // heads that publish them, so a reader that sees the new store sees its card too.
  ZREC_ASSIGN_OR_RETURN(const std::optional<std::string> card, read_card(path, global.read_context(path)));
  if (card) src.files.push_back({kCardFile, false, false});
  src.files.insert(src.files.end(), heads.begin(), heads.end());
  if (src.root) src.files.push_back({kRootMarkerFile, false, true});
  return src;
}

}  // namespace zrec::cli
