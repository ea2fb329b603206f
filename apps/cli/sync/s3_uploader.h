// Sends the files of an upload plan (sync_plan.h) to a bucket, one file after another in
// the plan's order, which is the order that keeps readers whole (sync_source.h):
//   - a file up to one part: one PUT;
//   - a larger file: a multipart upload, its parts sent on a few lanes at once, sized for
//     the file (at least 5 MiB, at most 10,000 parts); a multipart upload of the same
//     key that a killed sync left open is taken up, keeping each part the bucket holds
//     whose size and MD5 (its ETag) are those of the source's part;
//   - a data file DST holds a prefix of (kAppend), when that prefix is at least 5 MiB:
//     the prefix copied inside the bucket (UploadPartCopy, conditional on the ETag the
//     plan saw), only the tail sent;
//   - the root's marker last, by a conditional PUT: If-None-Match: * where DST had none,
//     If-Match: ETAG of the one the plan saw, so of two syncs publishing at once one wins
//     and the other fails naming why.
// Every object carries x-amz-meta-zrec-sha256, the digest a rerun compares.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "zrec/status.h"

#include "cli/sync/sync_plan.h"
#include "zrec_support/s3_client.h"

namespace zrec::cli {

struct UploadOptions {
  uint64_t min_part_bytes = uint64_t{8} << 20;  // --part-mib; S3 asks at least 5 MiB of each part but the last
  int lanes = 4;                                // parts in flight at once
  std::function<void(uint64_t bytes)> on_bytes = nullptr;  // part or file sent (progress)
};

struct UploadCounts {
  uint64_t files = 0;            // files sent (whole or their tail)
  uint64_t skipped = 0;          // files DST held already
  uint64_t parts = 0;            // parts sent (copied parts not counted)
  uint64_t resumed_parts = 0;    // parts of an open upload kept
  uint64_t copied_bytes = 0;     // bytes copied inside the bucket (UploadPartCopy)
  uint64_t aborted_uploads = 0;  // abandoned multipart uploads under DST aborted at the end
};

// The part size for a file of `size` bytes: `min_part` or more, so it takes at most
// 10,000 parts, in whole MiB.
uint64_t part_size_for(uint64_t size, uint64_t min_part);

// Sends `plan`'s files to the bucket in order, then aborts every multipart upload left
// open under `dst`'s prefix.
Status upload(S3Client& s3, const UploadPlan& plan, const std::string& dst, const UploadOptions& options,
              UploadCounts& counts);

}  // namespace zrec::cli
