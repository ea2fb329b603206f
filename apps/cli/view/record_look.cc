// Deciding and writing a record's rendering (see record_look.h).
#include "cli/view/record_look.h"

#include <cstring>
#include <string>

#include "cli/formats/file_signature.h"
#include "cli/formats/printable.h"
#include "cli/view/json_text.h"
#include "cli/view/number_summary.h"

namespace zrec::cli::view {

namespace {

bool is_bytes(const DType& dtype) { return dtype.kind == DTypeKind::kUInt && dtype.itemsize == 1; }

// UTF-8 with no control characters but tab, newline and carriage return.
bool is_text(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return false;
      ++i;
      continue;
    }
    const size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// Text cut at max_bytes without splitting a UTF-8 sequence.
std::string cut_text(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xc0) == 0x80) --end;
  return std::string(s.substr(0, end)) + "...";
}

void write_optional(JsonWriter& j, const char* key, const std::optional<double>& v) {
  j.key(key);
  if (v) j.value(*v);
  else j.null();
}

}  // namespace

std::string_view image_mime(const uint8_t* data, uint64_t n) {
  const FileSignature* signature = file_signature({data, static_cast<size_t>(n)});
  return signature != nullptr ? signature->mime : std::string_view();
}

std::optional<ImageLayout> dense_image_layout(const Schema& schema) {
  if (!schema.is_dense()) return std::nullopt;
  return image_layout(schema.dtype, *schema.item_shape);
}

void write_look(JsonWriter& j, const Schema& schema, std::span<const uint64_t> dims, const uint8_t* payload,
                uint64_t payload_bytes, const CellLimits& limits) {
  const DType& dtype = schema.dtype;
  if (payload_bytes == 0) {
    j.key("look").value("empty");
    return;
  }
  if (auto layout = image_layout(dtype, dims)) {
    j.key("look").value("pixels");
    j.key("width").value(layout->width).key("height").value(layout->height);
    j.key("channels").value(uint64_t{layout->channels});
    return;
  }
  if (is_bytes(dtype) && dims.size() == 1) {
    if (std::string_view mime = image_mime(payload, payload_bytes); !mime.empty()) {
      j.key("look").value("image").key("mime").value(mime);
      return;
    }
    const std::string_view text(reinterpret_cast<const char*>(payload), payload_bytes);
    if (is_text(text)) {
      if (auto json = pretty_json(text, limits.max_text_bytes)) {
        j.key("look").value("json").key("text").value(*json);
      } else {
        j.key("look").value("text").key("text").value(cut_text(text, limits.max_text_bytes));
      }
      return;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex;
    for (uint64_t i = 0; i < std::min<uint64_t>(payload_bytes, limits.hex_bytes); ++i) {
      if (i > 0) hex += ' ';
      hex += kHex[payload[i] >> 4];
      hex += kHex[payload[i] & 15];
    }
    if (payload_bytes > limits.hex_bytes) hex += " ...";
    j.key("look").value("bytes").key("hex").value(hex);
    return;
  }
  const NumberSummary s = summarize_numbers(dtype, dims, payload, limits.sparkline_points, limits.max_text_bytes);
  j.key("look").value("numbers").key("text").value(s.text).key("summarised").value(s.summarised);
  write_optional(j, "min", s.min);
  write_optional(j, "max", s.max);
  write_optional(j, "mean", s.mean);
  j.key("nan_count").value(s.nan_count);
  j.key("sparkline").begin_array();
  for (const auto& v : s.sparkline) {
    if (v) j.value(*v);
    else j.null();
  }
  j.end_array();
}

}  // namespace zrec::cli::view
