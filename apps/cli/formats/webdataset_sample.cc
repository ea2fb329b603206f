// WebDataset's members -> samples grouping (see webdataset_sample.h).
#include "cli/formats/webdataset_sample.h"

#include <string>
#include <string_view>
#include <utility>

namespace zrec::cli {

MemberName split_member_path(std::string_view path) {
  const size_t slash = path.rfind('/');
  const size_t base = slash == std::string_view::npos ? 0 : slash + 1;
  const size_t dot = path.find('.', base);
  if (dot == std::string_view::npos) return {std::string(path), std::string()};
  return {std::string(path.substr(0, dot)), std::string(path.substr(dot + 1))};
}

void SampleGrouper::add(std::string_view key, std::string path) {
  if (!open_) {
    open_ = true;
    key_ = key;
  }
  members_.push_back(std::move(path));
}

void SampleGrouper::clear() {
  members_.clear();
  open_ = false;
}

}  // namespace zrec::cli
