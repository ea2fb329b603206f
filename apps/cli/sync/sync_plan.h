// What an upload to s3:// sends, decided before anything is written: each source file
// against the object at its key (one HEAD each), by size and the SHA-256 sync stores with
// every object it writes (x-amz-meta-zrec-sha256). Also whether DST holds another
// dataset, which sync refuses to replace without -f.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "zrec/status.h"

#include "cli/sync/sync_source.h"
#include "zrec_support/file.h"
#include "zrec_support/s3_client.h"

namespace zrec::cli {

enum class SendKind {
  kSkip,     // DST holds these bytes already (size and digest)
  kNew,      // no object at DST
  kAppend,   // DST holds a prefix of it: only the tail goes (UploadPartCopy of the rest)
  kReplace,  // DST holds other bytes
};

struct FilePlan {
  SyncFile file;
  std::string local;  // the source file's path
  std::string key;    // s3://BUCKET/PREFIX/REL
  uint64_t size = 0;
  std::string sha256;  // of the source file
  SendKind kind = SendKind::kNew;
  uint64_t dst_size = 0;  // the object at DST (kAppend, kReplace, kSkip)
  std::string dst_etag;   // its ETag, the condition of a copy from it and of the marker's replacement
  // A file other than a data file (meta.zr, dict.zr, the marker), read whole when
  // planned: it may be rewritten by an append meanwhile, and what it points to must be
  // in the data files' bytes sent (see plan_upload).
  std::shared_ptr<const std::string> snapshot;
};

// Bytes [offset, offset + n) of the source file of `p`: from its snapshot, else from `f`.
Result<std::string> read_source(const FilePlan& p, const io::File* f, uint64_t offset, uint64_t n);

struct UploadPlan {
  std::vector<FilePlan> files;   // in the source's publish order
  bool dst_has_dataset = false;  // DST has a meta.zr or a marker
  // DST holds a dataset card (zrec card) and the source has none: removed before the
  // heads publish the source, so the new dataset never shows the old one's card.
  bool stale_card = false;
  // Non-empty when DST holds a dataset that this copy would not merely grow: why.
  std::string different;
};

// The plan for copying `src` to the bucket prefix `dst` ("s3://BUCKET/PREFIX"). Files
// are looked at in the reverse of the publish order: the marker and each meta.zr are
// read (kept as snapshots) before the data files' sizes are taken, and a data file only
// grows, so the data sent holds every record the meta.zr sent points to, whatever a
// writer appends meanwhile.
Result<UploadPlan> plan_upload(S3Client& s3, const SyncSource& src, const std::string& dst);

const char* send_kind_name(SendKind kind);

}  // namespace zrec::cli
