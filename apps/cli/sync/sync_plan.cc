// plan_upload (see sync_plan.h). A data file only grows (appends write past its end), so
// a DST object whose bytes are a prefix of the source's is the same store, published
// earlier; meta.zr changes with every append and says nothing about that.
#include "cli/sync/sync_plan.h"

#include <fcntl.h>

#include <algorithm>
#include <vector>

#include "zrec/dataset.h"

#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

// The SHA-256 of the file's `size` bytes, and of its first `prefix` bytes (when prefix <
// size; an empty prefix too: a data file published while its shard was still empty is
// the start of the grown one, not another store's).
Status hash_file(const FilePlan& p, const io::File& f, uint64_t size, uint64_t prefix, std::string& whole,
                 std::string& head) {
  ContentSha256 all, first;
  for (uint64_t at = 0; at < size;) {
    const uint64_t n = std::min<uint64_t>(4 << 20, size - at);
    ZREC_ASSIGN_OR_RETURN(const std::string bytes, read_source(p, &f, at, n));
    all.update(bytes.data(), n);
    if (at < prefix) first.update(bytes.data(), static_cast<size_t>(std::min<uint64_t>(n, prefix - at)));
    at += n;
  }
  whole = all.finish_hex();
  if (prefix < size) head = first.finish_hex();
  return Status::ok();
}

}  // namespace

Result<std::string> read_source(const FilePlan& p, const io::File* f, uint64_t offset, uint64_t n) {
  if (p.snapshot) return p.snapshot->substr(offset, n);
  std::string bytes(n, '\0');
  ZREC_RETURN_IF_ERROR(f->pread_exact(bytes.data(), n, offset));
  return bytes;
}

const char* send_kind_name(SendKind kind) {
  switch (kind) {
    case SendKind::kSkip:
      return "skip";
    case SendKind::kNew:
      return "new";
    case SendKind::kAppend:
      return "append";
    case SendKind::kReplace:
      return "replace";
  }
  return "";
}

Result<UploadPlan> plan_upload(S3Client& s3, const SyncSource& src, const std::string& dst) {
  UploadPlan plan;
  std::vector<std::string> stores;  // "" or "NAME/": where each store's files lie
  plan.files.resize(src.files.size());
  for (size_t i = src.files.size(); i-- > 0;) {  // the reverse of the publish order (above)
    const SyncFile& file = src.files[i];
    FilePlan& p = plan.files[i];
    p.file = file;
    p.local = join_path(src.path, file.rel);
    p.key = join_path(dst, file.rel);
    ZREC_ASSIGN_OR_RETURN(const io::File f, io::File::open(p.local, O_RDONLY));
    ZREC_ASSIGN_OR_RETURN(p.size, f.size());
    if (!file.data) {
      auto bytes = std::make_shared<std::string>(p.size, '\0');
      ZREC_RETURN_IF_ERROR(f.pread_exact(bytes->data(), p.size, 0));
      p.snapshot = std::move(bytes);
    }
    ZREC_ASSIGN_OR_RETURN(const S3Response head, s3.send(p.key, {.method = "HEAD"}, {}, {404}));
    std::string prefix_sha;
    const bool exists = head.status != 404;
    if (exists) {
      p.dst_size = head.length;
      p.dst_etag = head.etag;
      if (file.rel.ends_with(kMetaFile) || file.marker) plan.dst_has_dataset = true;
    }
    ZREC_RETURN_IF_ERROR(hash_file(p, f, p.size, exists ? p.dst_size : 0, p.sha256, prefix_sha));
    if (!exists) p.kind = SendKind::kNew;
    else if (p.dst_size == p.size && head.zrec_sha256 == p.sha256) p.kind = SendKind::kSkip;
    else if (file.data && p.dst_size < p.size && !prefix_sha.empty() && head.zrec_sha256 == prefix_sha)
      p.kind = SendKind::kAppend;
    else p.kind = SendKind::kReplace;
    // Another dataset: a data file or dictionary whose bytes this one does not start with.
    if (p.kind == SendKind::kReplace && !file.rel.ends_with(kMetaFile) && !file.marker && plan.different.empty())
      plan.different = "its '" + file.rel + "' (" + std::to_string(p.dst_size) +
                       " bytes) is not the start of the source's (" + std::to_string(p.size) + " bytes)";
    if (file.rel.ends_with(kMetaFile))
      stores.push_back(file.rel.substr(0, file.rel.size() - std::string(kMetaFile).size()));
  }
  if (std::none_of(src.files.begin(), src.files.end(), [](const SyncFile& f) { return f.rel == kCardFile; })) {
    ZREC_ASSIGN_OR_RETURN(const S3Response head, s3.send(join_path(dst, kCardFile), {.method = "HEAD"}, {}, {404}));
    plan.stale_card = head.status != 404;
  }
  // A store at DST with more data files than the source's is another store.
  for (const std::string& store : stores) {
    uint32_t shards = 0;
    for (const FilePlan& p : plan.files)
      if (p.file.data && p.file.rel.starts_with(store) && p.file.rel.find('/', store.size()) == std::string::npos)
        ++shards;
    const std::string extra = join_path(dst, store + data_file_name(shards));
    ZREC_ASSIGN_OR_RETURN(const S3Response head, s3.send(extra, {.method = "HEAD"}, {}, {404}));
    if (head.status != 404 && plan.different.empty())
      plan.different = "it has '" + store + data_file_name(shards) + "', a data file the source does not have";
  }
  // A root where a store is, or a store where a root is.
  if (!src.root) {
    ZREC_ASSIGN_OR_RETURN(const S3Response head,
                          s3.send(join_path(dst, kRootMarkerFile), {.method = "HEAD"}, {}, {404}));
    if (head.status != 404) plan.dst_has_dataset = true;
    if (head.status != 404 && plan.different.empty()) plan.different = "it is a root and the source is a store";
  } else {
    ZREC_ASSIGN_OR_RETURN(const S3Response head, s3.send(join_path(dst, kMetaFile), {.method = "HEAD"}, {}, {404}));
    if (head.status != 404) plan.dst_has_dataset = true;
    if (head.status != 404 && plan.different.empty()) plan.different = "it is a store and the source is a root";
  }
  if (!plan.dst_has_dataset) plan.different.clear();  // leftovers of a copy never finished: resumed
  return plan;
}

}  // namespace zrec::cli
