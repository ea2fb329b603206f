// One record of `zrec view`: its description (where it is stored, its sizes, whether it
// decodes, its full rendering), its picture, its stored bytes in hex, and its .npy file.
#pragma once

#include <cstdint>
#include <string>

#include "zrec/status.h"
#include "zrec/store.h"

#include "cli/report/json.h"
#include "cli/view/byte_budget.h"
#include "cli/view/http_transport.h"
#include "cli/view/token_text.h"

namespace zrec::cli::view {

// Longest side of a thumbnail, and of a full-size picture sent (larger ones are scaled).
inline constexpr uint32_t kThumbnailSide = 160;
inline constexpr uint32_t kMaxPictureSide = 4096;
// Stored bytes one hex request returns at most.
inline constexpr uint64_t kMaxHexBytes = 64 * 1024;

// Writes the record object: "id", "shard", "offset", "stored_bytes", "logical_bytes",
// "codec", "shape", "decoded" (true, or false with "error"), "npy_bytes", and the
// look's keys (record_look.h, kFullCell). A RecordLoc that breaks the format is
// kMalformed (the record cannot be located at all).
// `vocab`: the stream's vocabulary (view --vocab), or null: a token record's "tokens_text".
Status write_record(JsonWriter& j, Store& store, uint64_t id, ByteBudget& budget, const Vocabulary* vocab = nullptr);

// The record's picture as a response body: an encoded image as stored (its own type), or
// a uint8 picture array as PNG, scaled to `max_side`. kInvalidArgument when the record is
// not a picture.
Status picture_response(Store& store, uint64_t id, uint32_t max_side, ByteBudget& budget, HttpResponse& out);

// Writes {"id", "stored_bytes", "offset", "length", "hex": [lines]}: `length` stored
// bytes (at most kMaxHexBytes) from `offset` into the record's stored (still encoded)
// bytes, 16 per line as "OOOOOOOO  hh hh ...  |ascii|". Read straight from the data file,
// so a record that does not decode can be looked at too.
Status write_hex(JsonWriter& j, Store& store, uint64_t id, uint64_t offset, uint64_t length);

// The record as a .npy file (numpy.load reads it), for download.
Status npy_response(Store& store, uint64_t id, const std::string& file_name, ByteBudget& budget, HttpResponse& out);

}  // namespace zrec::cli::view
