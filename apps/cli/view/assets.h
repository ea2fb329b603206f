// zrec view's front end: the static files of apps/cli/view/assets/ (HTML, JavaScript,
// CSS, an icon), compiled into the program by cmake/embed_assets.cmake, so the page needs
// no network, no CDN and no file beside the binary.
#pragma once

#include <string_view>
#include <vector>

namespace zrec::cli::view {

struct Asset {
  std::string_view name;   // file name, e.g. "app.js"
  std::string_view bytes;  // its contents
};

// Every file, sorted by name. The table is built on first use, not at process start.
const std::vector<Asset>& assets();

// The asset called `name`, or nullptr.
const Asset* find_asset(std::string_view name);

// The Content-Type a file name's extension calls for ("text/html; charset=utf-8" for .html,
// ...); "application/octet-stream" for any other.
std::string_view asset_content_type(std::string_view name);

}  // namespace zrec::cli::view
