// One record's description, picture, hex and .npy (see record_detail.h).
#include "cli/view/record_detail.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cli/formats/npy.h"
#include "cli/view/png_writer.h"
#include "cli/view/record_look.h"
#include "cli/view/record_reader.h"

namespace zrec::cli::view {

namespace {

// The one record, read; its status (and the loc's) say what went wrong.
Result<ReadRecord> read_one(Store& store, uint64_t id, ByteBudget& budget, RecordBatch& batch) {
  ZREC_RETURN_IF_ERROR(batch.read(store, std::span<const uint64_t>(&id, 1), budget, true));
  ReadRecord r = batch.records()[0];
  if (!r.loc_ok) return r.status;
  return r;
}

}  // namespace

Status write_record(JsonWriter& j, Store& store, uint64_t id, ByteBudget& budget, const Vocabulary* vocab) {
  RecordBatch batch;
  ZREC_ASSIGN_OR_RETURN(ReadRecord r, read_one(store, id, budget, batch));
  const Schema& schema = store.schema();
  j.begin_object();
  j.key("id").value(id).key("shard").value(id % store.data_shards()).key("offset").value(r.loc.offset);
  j.key("stored_bytes").value(uint64_t{r.loc.phys_length}).key("logical_bytes").value(uint64_t{r.loc.logic_length});
  j.key("codec").value(to_string(store.codec()));
  j.key("decoded").value(r.read);
  if (!r.status.is_ok()) j.key("error").value(r.status.message());
  else if (!r.read)
    j.key("error").value("the record is larger than zrec view shows (" + std::to_string(kMaxShownRecordBytes >> 20) +
                         " MiB); download it as .npy");
  if (r.read) {
    j.key("shape").begin_array();
    for (uint64_t d : r.dims) j.value(d);
    j.end_array();
    j.key("npy_bytes").value(uint64_t{encode_npy_header(schema.dtype, r.dims).size() + r.payload_bytes});
    write_look(j, schema, r.dims, r.payload, r.payload_bytes, kFullCell);
    if (r.status.is_ok()) write_tokens_text(j, vocab, schema.dtype, r.payload, r.payload_bytes, kFullTokensTextBytes);
  }
  j.end_object();
  return Status::ok();
}

Status picture_response(Store& store, uint64_t id, uint32_t max_side, ByteBudget& budget, HttpResponse& out) {
  auto batch = std::make_shared<RecordBatch>();  // kept by a picture sent as stored (as npy_response)
  ZREC_ASSIGN_OR_RETURN(ReadRecord r, read_one(store, id, budget, *batch));
  ZREC_RETURN_IF_ERROR(r.status);
  if (!r.read) return invalid_argument("record " + std::to_string(id) + " is too large to show");
  const Schema& schema = store.schema();
  if (auto layout = image_layout(schema.dtype, r.dims)) {
    ZREC_ASSIGN_OR_RETURN(out.body, encode_png(fit_pixels(r.payload, *layout, max_side)));
    out.content_type = "image/png";
    return Status::ok();
  }
  const std::string_view mime =
      schema.dtype.kind == DTypeKind::kUInt && schema.dtype.itemsize == 1 && r.dims.size() == 1
          ? image_mime(r.payload, r.payload_bytes)
          : std::string_view();
  if (mime.empty()) return invalid_argument("record " + std::to_string(id) + " is not a picture");
  out.tail = std::string_view(reinterpret_cast<const char*>(r.payload), r.payload_bytes);
  out.keep = std::move(batch);
  out.content_type = std::string(mime);
  return Status::ok();
}

Status write_hex(JsonWriter& j, Store& store, uint64_t id, uint64_t offset, uint64_t length) {
  RecordLoc loc;
  ZREC_RETURN_IF_ERROR(store.read_locs(std::span<const uint64_t>(&id, 1), &loc));
  const uint64_t first = std::min<uint64_t>(offset, loc.phys_length);
  const uint64_t n = std::min({length, kMaxHexBytes, loc.phys_length - first});
  std::string bytes(n, '\0');
  Status read = store.read_data(static_cast<uint32_t>(id % store.data_shards()), loc.offset + first, n,
                                reinterpret_cast<uint8_t*>(bytes.data()));
  if (!read.is_ok()) return io_error("cannot read record " + std::to_string(id) + "'s stored bytes: " + read.message());
  j.begin_object().key("id").value(id).key("stored_bytes").value(uint64_t{loc.phys_length});
  j.key("offset").value(first).key("length").value(n).key("hex").begin_array();
  static constexpr char kHex[] = "0123456789abcdef";
  for (uint64_t line = 0; line < n; line += 16) {
    std::string text(8, '0');
    for (int k = 0; k < 8; ++k) text[7 - k] = kHex[((first + line) >> (4 * k)) & 15];
    text += "  ";
    std::string ascii;
    for (uint64_t i = line; i < line + 16; ++i) {
      if (i < n) {
        const unsigned char c = static_cast<unsigned char>(bytes[i]);
        text += kHex[c >> 4];
        text += kHex[c & 15];
        ascii += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '.';
      } else {
        text += "  ";
      }
      text += i % 16 == 7 || i % 16 == 15 ? "  " : " ";
    }
    j.value(text + "|" + ascii + "|");
  }
  j.end_array().end_object();
  return Status::ok();
}

Status npy_response(Store& store, uint64_t id, const std::string& file_name, ByteBudget& budget, HttpResponse& out) {
  // The batch (and its budget reservation) lives until the download is written: a
  // copy into the body would hold the record once more, outside the budget.
  auto batch = std::make_shared<RecordBatch>();
  ZREC_ASSIGN_OR_RETURN(ReadRecord r, read_one(store, id, budget, *batch));
  ZREC_RETURN_IF_ERROR(r.status);
  if (!r.read) return invalid_argument("record " + std::to_string(id) + " is too large for zrec view; use zrec cat");
  out.body = encode_npy_header(store.schema().dtype, r.dims);
  out.tail = std::string_view(reinterpret_cast<const char*>(r.payload), r.payload_bytes);
  out.keep = std::move(batch);
  out.content_type = "application/octet-stream";
  out.headers.emplace_back("Content-Disposition", "attachment; filename=\"" + file_name + "\"");
  return Status::ok();
}

}  // namespace zrec::cli::view
