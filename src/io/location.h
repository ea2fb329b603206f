// Where a store, a root or one of their files lies: a local path or a URL (http://,
// https://, s3://: zrec/remote.h), told apart once, when the Location is made. The
// readers of stores and roots (store files, root markers, cards, listings, digests) ask
// it to open, read or list instead of testing the string themselves, so a new kind of
// place is one more branch here, not one in each reader.
//
// Example:
//   const io::Location root(path);
//   ZREC_ASSIGN_OR_RETURN(auto marker, root.child("zrec-root").open_if_present(1 << 20, ctx, refuse));
//   for (const auto& name : root.entry_names()) ...;  // a URL lists nothing
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zrec/remote.h"
#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::io {

class Location {
 public:
  explicit Location(std::string path_or_url);

  bool remote() const { return remote_; }
  const std::string& path() const { return path_; }
  // For messages: a URL without its credentials (redact_url), a path as it is.
  std::string shown() const;

  // The file or directory `name` inside this one. A URL's name is one percent-encoded
  // segment put before its query string (a CDN's token), so a stream name from a remote
  // marker ("%2e%2e%2f...", "x?y=1") names a file inside the root, never another prefix
  // or query; an s3:// key and a path are joined as they are.
  Location child(const std::string& name) const;

  // This file, for reading: a local File, or a URL's RemoteFile with its first
  // `prefetch` bytes fetched by the request that pins its size and validator.
  // A URL is read with ctx.remote, and its requests stop at ctx.control.cancel.
  Result<std::unique_ptr<const Readable>> open_for_reading(uint64_t prefetch, const Context& ctx) const;

  // This file for reading, or null when there is none (a URL: 404 or 410): a local one
  // is never opened through a link nor blocks on a FIFO, and is refused with
  // not_regular(path) unless it is a regular file; a URL as open_for_reading.
  Result<std::unique_ptr<const Readable>> open_if_present(
      uint64_t prefetch, const Context& ctx, const std::function<Status(const std::string&)>& not_regular) const;

  // This local file opened with `flags` as open_if_present opens one, or nullopt when
  // there is none; `st` gets its stat. A URL is refused (local_path).
  Result<std::optional<File>> open_local_regular(int flags,
                                                 const std::function<Status(const std::string&)>& not_regular,
                                                 struct stat* st = nullptr) const;

  // The names in this directory but "." and ".." (unsorted); none when it cannot be
  // read. A URL lists nothing: web servers and buckets are never listed (a remote
  // root's streams are its marker's).
  std::vector<std::string> entry_names() const;

  // This location's path, for a command that writes it; a URL is refused, naming
  // `what` ("stores", "cards").
  Result<std::string> local_path(const std::string& what) const;

 private:
  Location(std::string path, bool remote) : path_(std::move(path)), remote_(remote) {}

  std::string path_;
  bool remote_ = false;
};

}  // namespace zrec::io
