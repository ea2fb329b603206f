// PNG encoding for `zrec view` (libpng): pictures stored as uint8 arrays are sent to the
// browser as PNG, which every browser shows.
#pragma once

#include <string>

#include "zrec/status.h"

#include "cli/view/array_image.h"

namespace zrec::cli::view {

// The PNG file of `pixels` (8 bits per channel: gray, RGB or RGBA by pixels.channels, 1, 3
// or 4). Performance note: zlib level 3 with the Sub filter only, rather than libpng's
// default (level 6, every filter tried on every row): a page of thumbnails waits on this.
// kInvalidArgument for other channel counts or an empty image; kIoError when libpng fails.
Result<std::string> encode_png(const Pixels& pixels);

}  // namespace zrec::cli::view
