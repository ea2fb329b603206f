// The first window's codec check of the append commands (expansion_check.h).
#include "cli/import/expansion_check.h"

#include <utility>

#include <fmt/format.h>

#include "cli/formats/printable.h"

namespace zrec::cli {

std::string expansion_warning(const std::string& store, Codec codec, uint64_t records, uint64_t payload,
                              uint64_t raw_bytes, uint64_t stored, bool created, const std::string& remedy) {
  if (codec == Codec::kRaw || records == 0 || payload == 0 || stored <= raw_bytes) return "";
  return fmt::format("'{}': {} stored {:.2f}x the bytes it read in the first {} record{}; {}", printable(store),
                     to_string(codec), static_cast<double>(stored) / static_cast<double>(payload), records,
                     records == 1 ? "" : "s",
                     created ? (remedy.empty() ? "--codec raw would store them smaller" : remedy)
                             : "a raw store would hold them smaller (zrec recompress --codec raw makes one)");
}

Status ExpansionCheck::append(StoreWriter& writer, std::span<const RecordRef> records) {
  if (checked_ || !warn_ || records.empty()) return writer.append(records);
  const uint64_t before = writer.stored_bytes();
  ZREC_RETURN_IF_ERROR(writer.append(records));
  for (const RecordRef& r : records) payload_ += r.size;
  const Schema& schema = writer.schema();
  prefixes_ += schema.is_dense() ? 0 : schema.shape_prefix_bytes() * records.size();
  records_ += records.size();
  stored_ += writer.stored_bytes() - before;
  // A few records say little of the codec (a one-record append to a store of labels
  // would warn on every run): the first windows are judged together once they hold
  // kMinRecordsToJudge records.
  if (records_ < kMinRecordsToJudge) return Status::ok();
  checked_ = true;
  warning_ =
      expansion_warning(store_, writer.codec(), records_, payload_, payload_ + prefixes_, stored_, created_, remedy_);
  return Status::ok();
}

void ExpansionCheck::report() {
  if (warning_.empty()) return;
  warn_(std::exchange(warning_, std::string()));
}

}  // namespace zrec::cli
