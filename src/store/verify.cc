// verify_store(): the whole-store check behind `zrec verify` (include/zrec/verify.h).
// The per-record rules are the reader's own (store_files.h: record_loc_rule,
// ragged_prefix_rule; codec::Decoder::decode), applied to every record, collecting
// problems instead of stopping at the first.
#include "zrec/verify.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <mutex>

#include "zrec/remote.h"

#include "codec/record_codec.h"
#include "format/layout.h"
#include "format/record_loc.h"
#include "format/sha256.h"
#include "io/location.h"
#include "store/store_files.h"
#include "store/verifier.h"

namespace zrec {

namespace store::verifying {

std::string file_of(uint32_t shard) { return format::data_file_name(shard); }

std::string where(uint64_t id, uint32_t shard, uint64_t offset) {
  return file_of(shard) + ": record " + std::to_string(id) + " (offset " + std::to_string(offset) + ")";
}

Status record_problem(VerifyReport& rep, const VerifyOptions& opt, VerifyProblem p) {
  ++rep.problem_count;
  Status s = opt.on_problem ? opt.on_problem(p) : Status::ok();
  if (rep.problems.size() < opt.keep_problems) rep.problems.push_back(std::move(p));
  return s;
}

Status Verifier::finish_digests(bool compared) {
  ZREC_ASSIGN_OR_RETURN(const uint64_t listed, opt_.against->count_all());
  const uint64_t n = files_.page.length;
  if (listed > n)
    add({"digest_count",
         "the per-record digests list " + std::to_string(listed) + " records but the store holds " + std::to_string(n) +
             " (records were lost, or the digests belong to another store)",
         std::nullopt, std::nullopt, std::nullopt});
  else if (listed < n && compared)
    rep_.notes.push_back("records " + std::to_string(listed) + ".." + std::to_string(n - 1) +
                         " have no recorded digest (appended later?) and were not compared");
  return sink_error_;
}

void Verifier::leftover_notes() {
  for (uint32_t s = 0; s < shards_; ++s) {
    auto size = files_.data_file(s).size();
    if (size.is_ok() && size.value() > files_.page.tails[s])
      rep_.notes.push_back(file_of(s) + ": " + std::to_string(size.value() - files_.page.tails[s]) +
                           " bytes past its tail (left by an interrupted append; readers ignore them and the "
                           "next append overwrites them)");
  }
  auto meta_size = files_.meta_file().size();
  const uint64_t table_end = format::record_loc_offset(files_.page.length);
  if (meta_size.is_ok() && meta_size.value() > table_end) {
    const ChecksumSetting setting = read_checksum_setting(files_);
    if (setting.marker && meta_size.value() == table_end + format::kRecordLocSize)
      rep_.notes.push_back("meta.zr: the empty store is marked for zstd content checksums (it was created with them)");
    else
      rep_.notes.push_back("meta.zr: " + std::to_string(meta_size.value() - table_end) +
                           " bytes past the record table (RecordLocs past length, left by an interrupted "
                           "append; readers ignore them)");
  }
  if (files_.is_remote()) return;  // a URL cannot be listed (zrec/remote.h)
  DIR* dir = ::opendir(files_.path.c_str());
  if (dir == nullptr) return;
  std::vector<std::string> strangers;
  while (dirent* e = ::readdir(dir)) {
    const std::string name = e->d_name;
    if (name == "." || name == ".." || name == format::kMetaFile) continue;
    if (name == format::kDictFile && files_.dictionary) continue;
    if (name == kCodecAutoFile && files_.codec_pending()) continue;
    bool data = false;
    for (uint32_t s = 0; s < shards_ && !data; ++s) data = name == file_of(s);
    if (!data) strangers.push_back(name);
  }
  ::closedir(dir);
  std::sort(strangers.begin(), strangers.end());
  for (const auto& name : strangers)
    rep_.notes.push_back("'" + name + "' is not a file of this store (readers ignore it)");
}

}  // namespace store::verifying

using store::verifying::record_problem;
using store::verifying::Verifier;

Result<VerifyReport> verify_store(const std::string& path, const VerifyOptions& options, const Context& ctx) {
  VerifyReport rep;
  rep.path = redact_url(path);
  rep.quick = options.quick;
  const io::Location at(path);
  struct stat st;
  if (!at.remote() && ::stat(path.c_str(), &st) != 0) return io::errno_status(errno, "cannot open store", path);
  if (!at.remote() && !S_ISDIR(st.st_mode)) return invalid_argument("'" + path + "' is not a store (not a directory)");

  auto loaded = store::load_store_files(path, io::LockMode::kShared, ctx);
  if (!loaded.is_ok()) {
    const Status& s = loaded.status();
    // A store-level rule broken (or a symbolic link where a store file belongs): the one
    // problem there is to report; the records can't be walked without a sound page.
    if (s.code() == StatusCode::kMalformed || s.code() == StatusCode::kInvalidArgument) {
      std::string message = s.message();
      const std::string prefix = "malformed store '" + rep.path + "': ";
      if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
      ZREC_RETURN_IF_ERROR(record_problem(rep, options, {"store", message, std::nullopt, std::nullopt, std::nullopt}));
      return rep;
    }
    // No meta.zr beside a store's data files: a store that lost its table, not a stranger.
    struct stat data_st;
    if (s.code() == StatusCode::kNotFound && !at.remote() &&
        ::lstat(join_path(path, format::data_file_name(0)).c_str(), &data_st) == 0) {
      ZREC_RETURN_IF_ERROR(record_problem(rep, options,
                                          {"store", "meta.zr is missing (the directory holds data_0.zr of a store)",
                                           std::nullopt, std::nullopt, std::nullopt}));
      return rep;
    }
    return s;
  }
  store::StoreFiles& files = loaded.value();
  rep.opened = true;
  rep.writer_active = files.writer_active;
  rep.length = files.page.length;
  rep.codec = files.page.codec;
  rep.codec_pending = files.codec_pending();
  rep.data_shards = files.page.data_shards;
  rep.schema = files.schema;

  Verifier v(files, options, ctx.lanes ? ctx.lanes : std::make_shared<Lanes>(read_lane_budget()), ctx.control, rep);
  if (!files.writer_active) v.leftover_notes();  // past the tails a live writer is at work, not left over
  ZREC_RETURN_IF_ERROR(v.table_pass());
  ZREC_RETURN_IF_ERROR(v.sink_error());
  if (options.quick) return rep;
  const bool compared = !v.stopped();
  if (compared) {
    ZREC_RETURN_IF_ERROR(v.payload_pass());
    ZREC_RETURN_IF_ERROR(v.sink_error());
  }
  // Read to its end even when the passes stopped early, so a malformed line anywhere in
  // it is an error whatever the store holds.
  if (options.against != nullptr) ZREC_RETURN_IF_ERROR(v.finish_digests(compared));
  return rep;
}

Status RecordDigestList::next(uint64_t count, std::vector<Hash>& out) {
  const uint64_t take = std::min<uint64_t>(count, hashes_.size() - at_);
  out.assign(hashes_.begin() + static_cast<ptrdiff_t>(at_), hashes_.begin() + static_cast<ptrdiff_t>(at_ + take));
  at_ += take;
  return Status::ok();
}

VerifyBlindSpot VerifyReport::blind_spot() const {
  if (!opened) return VerifyBlindSpot::kNone;
  if (quick) return VerifyBlindSpot::kPayloadsNotRead;
  if (length == 0 || digests_compared >= length) return VerifyBlindSpot::kNone;
  if (codec == Codec::kRaw) return VerifyBlindSpot::kRawPayloads;
  if (records_with_checksum >= length) return VerifyBlindSpot::kNone;
  return VerifyBlindSpot::kUnchecksummedFrames;
}

}  // namespace zrec
