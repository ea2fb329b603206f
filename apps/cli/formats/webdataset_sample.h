// WebDataset's grouping of tar members into samples, as append-tar reads them: a
// member's key is its path up to the first dot of the basename, its extension the rest;
// consecutive members with one key form a sample; a member without an extension neither
// joins nor ends one.
//
//   "a/0001.jpg", "a/0001.cls", "a/0002.jpg"  -> sample "a/0001" (jpg, cls), then "a/0002"
//
// Pure: no tar, no store. The caller reads the members and decides what each sample
// becomes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zrec::cli {

// A member path split as WebDataset splits it: "a/0001.seg.png" -> key "a/0001", ext
// "seg.png". A basename without a dot has no extension (ext empty: the member is
// ignored), and its key is the whole path.
struct MemberName {
  std::string key, ext;
};
MemberName split_member_path(std::string_view path);

// The sample being gathered. For each member with an extension: when ends_sample(key)
// the caller closes the open sample (it ends with its last member: clear() it), then
// add()s the member.
class SampleGrouper {
 public:
  // A sample is open and `key` is not its key: the member starts the next sample.
  bool ends_sample(std::string_view key) const { return open_ && key != key_; }
  // The member `path` of key `key` joins the open sample, or opens one of that key.
  void add(std::string_view key, std::string path);
  // The open sample closed or dropped: none is open.
  void clear();

  bool open() const { return open_; }
  const std::string& key() const { return key_; }
  // Every member path of the open sample, in tar order.
  const std::vector<std::string>& members() const { return members_; }

 private:
  bool open_ = false;
  std::string key_;
  std::vector<std::string> members_;
};

}  // namespace zrec::cli
