// The first window's codec check of the append commands (expansion_check.h).
#include "cli/import/expansion_check.h"

#include <utility>

#include <fmt/format.h>

#include "cli/formats/printable.h"

namespace zrec::cli {

std::string expansion_warning(const std::string& store, Codec codec, uint64_t records, uint64_t payload,
                              uint64_t raw_bytes, uint64_t stored, bool created) {
  if (codec == Codec::kRaw || records == 0 || payload == 0 || stored <= raw_bytes) return "";
  return fmt::format("'{}': {} stored {:.2f}x the bytes it read in the first {} record{}; {}", printable(store),
                     to_string(codec), static_cast<double>(stored) / static_cast<double>(payload), records,
                     records == 1 ? "" : "s",
                     created ? "--codec raw would store them smaller"
                             : "a raw store would hold them smaller (zrec recompress --codec raw makes one)");
}

Status ExpansionCheck::append(StoreWriter& writer, std::span<const RecordRef> records) {
  if (checked_ || !warn_ || records.empty()) return writer.append(records);
  checked_ = true;
  const uint64_t before = writer.stored_bytes();
  ZREC_RETURN_IF_ERROR(writer.append(records));
  uint64_t payload = 0;
  for (const RecordRef& r : records) payload += r.size;
  const Schema& schema = writer.schema();
  const uint64_t prefixes = schema.is_dense() ? 0 : schema.shape_prefix_bytes() * records.size();
  warning_ = expansion_warning(store_, writer.codec(), records.size(), payload, payload + prefixes,
                               writer.stored_bytes() - before, created_);
  return Status::ok();
}

void ExpansionCheck::report() {
  if (warning_.empty()) return;
  warn_(std::exchange(warning_, std::string()));
}

}  // namespace zrec::cli
