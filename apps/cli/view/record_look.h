// How `zrec view` shows one record, decided by what it holds:
//   "image"   a |u1 record holding an encoded picture, by its magic bytes (JPEG, PNG, GIF,
//             WebP): sent to the browser as it is stored, with that type;
//   "pixels"  a uint8 array shaped like a picture (array_image.h): encoded to PNG here;
//   "json"    |u1 text that parses as a JSON object or array: pretty-printed;
//   "text"    |u1 bytes that are UTF-8 text (tabs and newlines allowed, no other control);
//   "numbers" any other array: NumPy's printout, min/max/mean, a sparkline for 1-D;
//   "bytes"   |u1 bytes that are none of the above: a hex preview;
//   "empty"   a record of no elements.
// The browser never receives a record's bytes as a document it would run: images go out
// with an image type and nosniff, everything else inside JSON or as a download.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "zrec/schema.h"

#include "cli/report/json.h"
#include "cli/view/array_image.h"

namespace zrec::cli::view {

// "image/jpeg", "image/png", "image/gif" or "image/webp" when `data` starts with that
// format's signature; empty otherwise. SVG is never one: it is a document that can run
// script.
std::string_view image_mime(const uint8_t* data, uint64_t n);

// How much of a record a rendering shows.
struct CellLimits {
  size_t max_text_bytes;    // text, JSON and number printouts are cut here
  size_t sparkline_points;  // points of a 1-D record's sparkline
  size_t hex_bytes;         // bytes of a "bytes" record shown in hex
};
inline constexpr CellLimits kGridCell{2048, 64, 64};
inline constexpr CellLimits kFullCell{256 * 1024, 400, 1024};

// Whether a record of this schema looks like "pixels" without reading it: a Dense uint8
// store whose item_shape is a picture's. A page of such records needs no payload read.
std::optional<ImageLayout> dense_image_layout(const Schema& schema);

// Writes the rendering's keys into the JSON object being written: "look" and, by look,
// "mime" (image); "width", "height", "channels" (pixels: the full picture's); "text"
// (json, text); "text", "summarised", "min", "max", "mean", "nan_count", "sparkline"
// (numbers); "hex" (bytes). `payload` is the record's elements (a Ragged record's shape
// prefix already taken off), `dims` its shape.
void write_look(JsonWriter& j, const Schema& schema, std::span<const uint64_t> dims, const uint8_t* payload,
                uint64_t payload_bytes, const CellLimits& limits);

}  // namespace zrec::cli::view
