// upload (see s3_uploader.h).
#include "cli/sync/s3_uploader.h"

#include <fcntl.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "zrec/dataset.h"

#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

constexpr uint64_t kMinPart = uint64_t{5} << 20;
constexpr uint64_t kMaxParts = 10000;
constexpr uint64_t kMaxCopyPart = uint64_t{5} << 30;  // S3's limit on one part, copied or sent

// S3 listings write an ETag's quotes as &quot;.
std::string clean_etag(std::string etag) {
  for (size_t at; (at = etag.find("&quot;")) != std::string::npos;) etag.replace(at, 6, "\"");
  return etag;
}

std::string unescape_xml(std::string s) {
  static const std::pair<const char*, const char*> kEntities[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (const auto& [from, to] : kEntities)
    for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += std::string(to).size())
      s.replace(at, std::string(from).size(), to);
  return s;
}

// "s3://BUCKET" and "KEY" of "s3://BUCKET/KEY".
std::string bucket_url(const std::string& url) { return url.substr(0, url.find('/', 5)); }
std::string key_of(const std::string& url) {
  const size_t slash = url.find('/', 5);
  return slash == std::string::npos ? std::string() : url.substr(slash + 1);
}

struct Part {
  int number = 0;
  uint64_t offset = 0, size = 0;
  bool copy = false;  // bytes [offset, offset + size) of the object at DST, copied in the bucket
  bool kept = false;  // an open upload holds it already
  std::string etag;
};

std::vector<std::pair<std::string, std::string>> digest_header(const FilePlan& p) {
  return {{"x-amz-meta-zrec-sha256", p.sha256}};
}

// The open multipart uploads of keys starting with `prefix`: (key, upload id), as
// ListMultipartUploads gives them. The prefix asked of the bucket stops before its first
// '/' and the keys are filtered here: moto's server (5.2) refuses the signature of a
// request whose query holds a '/' (%2F) as SigV4 encodes it, which AWS accepts.
Result<std::vector<std::pair<std::string, std::string>>> open_uploads(S3Client& s3, const std::string& bucket,
                                                                      const std::string& prefix) {
  std::vector<std::pair<std::string, std::string>> out;
  std::string key_marker, id_marker;
  const std::string asked = prefix.substr(0, prefix.find('/'));
  for (;;) {
    S3Call call{.method = "GET", .query = {{"uploads", ""}, {"prefix", asked}}, .bucket_level = true};
    if (!key_marker.empty()) {
      call.query.emplace_back("key-marker", key_marker);
      call.query.emplace_back("upload-id-marker", id_marker);
    }
    ZREC_ASSIGN_OR_RETURN(const S3Response r, s3.send(bucket, call));
    size_t at = 0, end = 0;
    for (;;) {
      const std::string upload = xml_field(r.body, "Upload", at, &end);
      if (end == std::string::npos) break;
      std::string key = unescape_xml(xml_field(upload, "Key"));
      if (key.starts_with(prefix)) out.emplace_back(std::move(key), unescape_xml(xml_field(upload, "UploadId")));
      at = end;
    }
    if (xml_field(r.body, "IsTruncated") != "true") return out;
    key_marker = unescape_xml(xml_field(r.body, "NextKeyMarker"));
    id_marker = unescape_xml(xml_field(r.body, "NextUploadIdMarker"));
    if (key_marker.empty()) return out;
  }
}

// The parts an open upload holds: number -> (size, ETag).
Result<std::map<int, std::pair<uint64_t, std::string>>> listed_parts(S3Client& s3, const std::string& key,
                                                                     const std::string& upload_id) {
  std::map<int, std::pair<uint64_t, std::string>> out;
  std::string marker;
  for (;;) {
    S3Call call{.method = "GET", .query = {{"uploadId", upload_id}}};
    if (!marker.empty()) call.query.emplace_back("part-number-marker", marker);
    ZREC_ASSIGN_OR_RETURN(const S3Response r, s3.send(key, call));
    size_t at = 0, end = 0;
    for (;;) {
      const std::string part = xml_field(r.body, "Part", at, &end);
      if (end == std::string::npos) break;
      out[std::stoi("0" + xml_field(part, "PartNumber"))] = {std::stoull("0" + xml_field(part, "Size")),
                                                             clean_etag(xml_field(part, "ETag"))};
      at = end;
    }
    if (xml_field(r.body, "IsTruncated") != "true") return out;
    marker = xml_field(r.body, "NextPartNumberMarker");
    if (marker.empty()) return out;
  }
}

// The parts of `p`: its old bytes copied (kAppend) then the rest sent, or all of it sent.
std::vector<Part> parts_of(const FilePlan& p, uint64_t part_size, bool append) {
  std::vector<Part> parts;
  uint64_t at = 0;
  if (append) {
    const uint64_t pieces = (p.dst_size + kMaxCopyPart - 1) / kMaxCopyPart;
    for (uint64_t i = 0; i < pieces; ++i) {
      const uint64_t end = p.dst_size * (i + 1) / pieces;
      parts.push_back({static_cast<int>(parts.size() + 1), at, end - at, true, false, {}});
      at = end;
    }
  }
  while (at < p.size) {
    const uint64_t n = std::min(part_size, p.size - at);
    parts.push_back({static_cast<int>(parts.size() + 1), at, n, false, false, {}});
    at += n;
  }
  return parts;
}

Status check_complete_answer(const S3Response& r, const std::string& key) {
  // CompleteMultipartUpload may answer 200 and then fail in its body.
  if (r.body.find("<Error>") != std::string::npos)
    return io_error("POST " + key + ": " + xml_field(r.body, "Code") + " (" + xml_field(r.body, "Message") + ")");
  return Status::ok();
}

class FileSender {
 public:
  FileSender(S3Client& s3, const UploadOptions& options, UploadCounts& counts)
      : s3_(s3), options_(options), counts_(counts) {}

  Status send(const FilePlan& p) {
    const uint64_t part_size = part_size_for(p.size, options_.min_part_bytes);
    const bool append = p.kind == SendKind::kAppend && p.dst_size >= kMinPart;
    if (!append && (p.size <= part_size || p.file.marker)) return put_whole(p);
    return multipart(p, part_size, append, true);
  }

 private:
  Status put_whole(const FilePlan& p) {
    ZREC_ASSIGN_OR_RETURN(const io::File f, io::File::open(p.local, O_RDONLY));
    ZREC_ASSIGN_OR_RETURN(const std::string bytes, read_source(p, &f, 0, p.size));
    S3Call call{.method = "PUT", .headers = digest_header(p)};
    if (p.file.marker) {
      // The publish itself: it must replace exactly what this sync saw.
      if (p.kind == SendKind::kNew) call.headers.emplace_back("if-none-match", "*");
      else call.headers.emplace_back("if-match", p.dst_etag);
    }
    ZREC_ASSIGN_OR_RETURN(const S3Response r, s3_.send(p.key, call, bytes, {412}));
    if (r.status == 412)
      return Status(StatusCode::kBusy, "PUT " + p.key + ": HTTP 412 Precondition Failed: another sync published " +
                                           "this root since this one began (its marker is not the one seen); " +
                                           "nothing of the root was replaced by this run's marker: sync again");
    if (options_.on_bytes) options_.on_bytes(p.size);
    return Status::ok();
  }

  Status multipart(const FilePlan& p, uint64_t part_size, bool append, bool may_resume) {
    std::vector<Part> parts = parts_of(p, part_size, append);
    ZREC_ASSIGN_OR_RETURN(const io::File f, io::File::open(p.local, O_RDONLY));
    std::string upload_id;
    bool resumed = false;
    // An append's upload is taken up too: its sent parts are checked as any; its copied
    // parts are copied again (requests, no bytes sent).
    if (may_resume) {
      ZREC_ASSIGN_OR_RETURN(const auto uploads, open_uploads(s3_, bucket_url(p.key), key_of(p.key)));
      for (const auto& [key, id] : uploads)
        if (key == key_of(p.key)) upload_id = id;  // the last listed: the newest
      if (!upload_id.empty()) {
        ZREC_ASSIGN_OR_RETURN(const auto held, listed_parts(s3_, p.key, upload_id));
        for (Part& part : parts) {
          if (part.copy) continue;
          const auto it = held.find(part.number);
          if (it == held.end() || it->second.first != part.size) continue;
          ZREC_ASSIGN_OR_RETURN(const std::string bytes, read_source(p, &f, part.offset, part.size));
          if (it->second.second != "\"" + md5_hex(bytes.data(), bytes.size()) + "\"") continue;
          part.kept = true;
          part.etag = it->second.second;
          ++counts_.resumed_parts;
          resumed = true;
        }
      }
    }
    if (upload_id.empty()) {
      ZREC_ASSIGN_OR_RETURN(
          const S3Response r,
          s3_.send(p.key, {.method = "POST", .query = {{"uploads", ""}}, .headers = digest_header(p)}));
      upload_id = xml_field(r.body, "UploadId");
      if (upload_id.empty()) return io_error("POST " + p.key + "?uploads: the answer holds no UploadId");
    }
    ZREC_RETURN_IF_ERROR(send_parts(p, f, upload_id, parts));
    std::string xml = "<CompleteMultipartUpload>";
    for (const Part& part : parts)
      xml += "<Part><PartNumber>" + std::to_string(part.number) + "</PartNumber><ETag>" + part.etag + "</ETag></Part>";
    xml += "</CompleteMultipartUpload>";
    ZREC_ASSIGN_OR_RETURN(const S3Response done,
                          s3_.send(p.key, {.method = "POST", .query = {{"uploadId", upload_id}}}, xml));
    ZREC_RETURN_IF_ERROR(check_complete_answer(done, p.key));
    if (resumed) {
      // The upload taken up was begun by an earlier run, with that run's digest; the
      // parts match the source, and so must the digest a later rerun compares.
      ZREC_ASSIGN_OR_RETURN(const S3Response head, s3_.send(p.key, {.method = "HEAD"}));
      if (head.zrec_sha256 != p.sha256 || head.length != p.size) return multipart(p, part_size, append, false);
    }
    return Status::ok();
  }

  // Sends the parts not kept on options_.lanes lanes; each part's ETag goes into `parts`.
  Status send_parts(const FilePlan& p, const io::File& f, const std::string& upload_id, std::vector<Part>& parts) {
    std::atomic<size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mutex;
    Status first_error = Status::ok();
    auto lane = [&] {
      for (size_t i; !failed.load() && (i = next.fetch_add(1)) < parts.size();) {
        Part& part = parts[i];
        if (part.kept) continue;
        Status s = send_part(p, f, upload_id, part);
        if (!s.is_ok()) {
          std::lock_guard lock(mutex);
          if (first_error.is_ok()) first_error = std::move(s);
          failed = true;
        }
      }
    };
    std::vector<std::thread> lanes;
    const size_t n = std::min<size_t>(std::max(options_.lanes, 1), parts.size());
    for (size_t i = 1; i < n; ++i) lanes.emplace_back(lane);
    lane();
    for (std::thread& t : lanes) t.join();
    return first_error;
  }

  Status send_part(const FilePlan& p, const io::File& f, const std::string& upload_id, Part& part) {
    S3Call call{.method = "PUT", .query = {{"partNumber", std::to_string(part.number)}, {"uploadId", upload_id}}};
    if (part.copy) {
      call.headers = {{"x-amz-copy-source", s3_copy_source(p.key)},
                      {"x-amz-copy-source-if-match", p.dst_etag},
                      {"x-amz-copy-source-range",
                       "bytes=" + std::to_string(part.offset) + "-" + std::to_string(part.offset + part.size - 1)}};
      ZREC_ASSIGN_OR_RETURN(const S3Response r, s3_.send(p.key, call));
      part.etag = clean_etag(xml_field(r.body, "ETag"));
      if (part.etag.empty()) return io_error("PUT " + p.key + " (a part copy): the answer holds no ETag");
      std::lock_guard lock(count_mutex_);
      counts_.copied_bytes += part.size;
      return Status::ok();
    }
    ZREC_ASSIGN_OR_RETURN(const std::string bytes, read_source(p, &f, part.offset, part.size));
    ZREC_ASSIGN_OR_RETURN(const S3Response r, s3_.send(p.key, call, bytes));
    part.etag = r.etag;
    if (part.etag.empty()) return io_error("PUT " + p.key + " (part " + std::to_string(part.number) + "): no ETag");
    {
      std::lock_guard lock(count_mutex_);
      ++counts_.parts;
    }
    if (options_.on_bytes) options_.on_bytes(part.size);
    return Status::ok();
  }

  S3Client& s3_;
  const UploadOptions& options_;
  UploadCounts& counts_;
  std::mutex count_mutex_;
};

}  // namespace

uint64_t part_size_for(uint64_t size, uint64_t min_part) {
  uint64_t part = std::max(min_part, kMinPart);
  const uint64_t needed = (size + kMaxParts - 1) / kMaxParts;
  if (needed > part) part = (needed + (uint64_t{1} << 20) - 1) >> 20 << 20;
  return part;
}

Status upload(S3Client& s3, const UploadPlan& plan, const std::string& dst, const UploadOptions& options,
              UploadCounts& counts) {
  FileSender sender(s3, options, counts);
  bool card_removed = !plan.stale_card;
  for (const FilePlan& p : plan.files) {
    if (!card_removed && !p.file.data) {  // the first head: the old card goes before it
      ZREC_RETURN_IF_ERROR(s3.send(join_path(dst, kCardFile), {.method = "DELETE"}, {}, {404}).status());
      card_removed = true;
    }
    if (p.kind == SendKind::kSkip) {
      ++counts.skipped;
      continue;
    }
    ZREC_RETURN_IF_ERROR(sender.send(p));
    ++counts.files;
  }
  // Uploads a killed run left open hold parts the bucket keeps (and bills) until aborted.
  std::string prefix = key_of(dst);
  if (!prefix.empty() && !prefix.ends_with('/')) prefix += '/';
  ZREC_ASSIGN_OR_RETURN(const auto uploads, open_uploads(s3, bucket_url(dst), prefix));
  for (const auto& [key, id] : uploads) {
    ZREC_RETURN_IF_ERROR(
        s3.send(bucket_url(dst) + "/" + key, {.method = "DELETE", .query = {{"uploadId", id}}}, {}, {404}).status());
    ++counts.aborted_uploads;
  }
  return Status::ok();
}

}  // namespace zrec::cli
