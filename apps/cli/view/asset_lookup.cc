// find_asset and asset_content_type (see assets.h; the table itself is generated).
#include <algorithm>

#include "cli/view/assets.h"

namespace zrec::cli::view {

const Asset* find_asset(std::string_view name) {
  const auto& all = assets();
  auto it = std::find_if(all.begin(), all.end(), [&](const Asset& a) { return a.name == name; });
  return it == all.end() ? nullptr : &*it;
}

std::string_view asset_content_type(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace zrec::cli::view
