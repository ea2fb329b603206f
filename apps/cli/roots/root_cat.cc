#include "cli/roots/root_cat.h"

#include <algorithm>
#include <vector>

#include "zrec/store.h"

#include "cli/formats/bytes_text.h"
#include "cli/formats/file_signature.h"
#include "cli/formats/json_string.h"
#include "cli/formats/record_format.h"
#include "cli/os/interrupt.h"

namespace zrec::cli {

std::string binary_words(std::span<const uint8_t> bytes) {
  if (const FileSignature* signature = file_signature(bytes))
    return "<" + std::string(signature->kind) + ", " + std::to_string(bytes.size()) + " bytes>";
  if (!looks_like_text(bytes)) return "<binary data, " + std::to_string(bytes.size()) + " bytes>";
  return {};
}

namespace {

// One record as cat --format jsonl writes it (cmd_cat.cc does the same for a store).
void append_record(std::string& text, const Schema& schema, const uint8_t* record, uint64_t size,
                   const RootCatOptions& o) {
  const uint64_t prefix = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
  const std::vector<uint64_t> dims = schema.is_dense() ? *schema.item_shape : ragged_dims(schema, record);
  const uint8_t* payload = record + prefix;
  const uint64_t payload_bytes = size - prefix;
  const bool bytes_as_strings =
      !o.bytes_as_numbers && !schema.is_dense() && schema.ndim == 1 && schema.dtype.str() == "|u1";
  const std::string named = bytes_as_strings && o.summarise ? binary_words({payload, payload_bytes}) : std::string();
  if (!named.empty()) append_json_string(text, named);
  else if (bytes_as_strings) append_bytes_as_string(text, {payload, payload_bytes}, /*json=*/true);
  else append_json_record(text, schema.dtype, dims, payload, o.summarise);
}

// The names a record's integer values stand for, as JSON: the name of a lone value, an
// array of names otherwise; a value with no name (outside the list) is null.
void append_names(std::string& text, const Schema& schema, const uint8_t* record, uint64_t size,
                  const std::vector<std::string>& names) {
  const uint64_t prefix = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
  const uint64_t itemsize = schema.dtype.itemsize;
  const uint64_t count = (size - prefix) / itemsize;
  const bool lone = schema.is_dense() && schema.item_shape->empty();
  if (!lone) text += '[';
  for (uint64_t i = 0; i < count; ++i) {
    if (i > 0) text += ", ";
    const std::optional<double> v = element_as_double(schema.dtype, record + prefix + i * itemsize);
    if (v && *v >= 0 && *v < static_cast<double>(names.size()))
      append_json_string(text, names[static_cast<size_t>(*v)]);
    else text += "null";
  }
  if (!lone) text += ']';
}

// The names a card gives stream `name`: its labels (with the key suffix ":name") or its
// vocabulary (":tokens"); null when none.
const std::vector<std::string>* card_names(const std::optional<DatasetCard>& card, const std::string& name,
                                           std::string& key_suffix) {
  if (!card) return nullptr;
  if (const auto it = card->labels.find(name); it != card->labels.end()) {
    key_suffix = ":name";
    return &it->second;
  }
  if (const auto it = card->vocab.find(name); it != card->vocab.end()) {
    key_suffix = ":tokens";
    return &it->second;
  }
  return nullptr;
}

}  // namespace

Status cat_root_jsonl(OpenedRoot& root, const RootCatOptions& o, Output& out) {
  constexpr uint64_t kChunk = 4096;  // samples rendered at a time
  std::vector<std::vector<std::string>> rendered(root.streams.size()), named(root.streams.size());
  std::vector<const std::vector<std::string>*> names(root.streams.size());
  std::vector<std::string> name_keys(root.streams.size());
  for (size_t k = 0; k < root.streams.size(); ++k) names[k] = card_names(o.card, root.streams[k].name, name_keys[k]);
  std::vector<uint64_t> ids;
  std::string line;
  for (uint64_t first = 0; first < o.total; first += kChunk) {
    if (interrupted()) return Status(StatusCode::kCancelled, "interrupted");
    const uint64_t n = std::min(kChunk, o.total - first);
    ids.clear();
    for (uint64_t i = 0; i < n; ++i) ids.push_back(o.id_at(first + i));
    for (size_t k = 0; k < root.streams.size(); ++k) {
      Store& store = *root.streams[k].store;
      std::vector<std::string>& values = rendered[k];
      values.assign(n, std::string());
      named[k].assign(names[k] != nullptr ? n : 0, std::string());
      uint64_t at = 0;  // scan hands the records back in the order asked
      ZREC_RETURN_IF_ERROR(store.scan(ids, o.window_bytes, [&](const Window& w) -> Status {
        for (size_t r = 0; r < w.ids.size(); ++r, ++at) {
          const uint8_t* record = w.data + w.offsets[r];
          const uint64_t size = w.offsets[r + 1] - w.offsets[r];
          append_record(values[at], store.schema(), record, size, o);
          if (names[k] != nullptr) append_names(named[k][at], store.schema(), record, size, *names[k]);
        }
        return Status::ok();
      }));
    }
    for (uint64_t i = 0; i < n; ++i) {
      line.clear();
      if (o.with_ids) line += "{\"id\": " + std::to_string(ids[i]) + ", \"sample\": ";
      line += '{';
      for (size_t k = 0; k < root.streams.size(); ++k) {
        if (k > 0) line += ", ";
        append_json_string(line, root.streams[k].name);
        line += ": ";
        line += rendered[k][i];
        if (names[k] != nullptr) {
          line += ", ";
          append_json_string(line, root.streams[k].name + name_keys[k]);
          line += ": " + named[k][i];
        }
      }
      line += o.with_ids ? "}}\n" : "}\n";
      ZREC_RETURN_IF_ERROR(out.write(line));
    }
  }
  return Status::ok();
}

}  // namespace zrec::cli
