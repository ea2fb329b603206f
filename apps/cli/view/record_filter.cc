// The records grid's filters (see record_filter.h).
#include "cli/view/record_filter.h"

#include <algorithm>
#include <charconv>
#include <optional>

#include "cli/formats/printable.h"
#include "cli/formats/record_format.h"
#include "cli/view/record_look.h"
#include "cli/view/record_reader.h"

namespace zrec::cli::view {

namespace {

// Positions examined per read: a chunk's label (or text) records are read in one gather,
// so a remote store answers in few requests; text chunks are smaller, their records larger.
constexpr uint64_t kLabelChunk = 1024;
constexpr uint64_t kTextChunk = 128;

char fold_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// Whether `hay` holds `needle` (already lower-cased), ASCII letters in any case.
bool contains_folded(std::string_view hay, const std::string& needle) {
  if (needle.size() > hay.size()) return false;
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                     [](char a, char b) { return fold_ascii(a) == b; }) != hay.end();
}

}  // namespace

bool holds_labels(const Schema& schema) {
  if (!schema.is_dense()) return false;
  uint64_t items = 1;
  for (uint64_t d : *schema.item_shape) items *= d;
  const DTypeKind k = schema.dtype.kind;
  return items == 1 && (k == DTypeKind::kInt || k == DTypeKind::kUInt || k == DTypeKind::kBool);
}

bool holds_text(const Schema& schema) {
  const DTypeKind k = schema.dtype.kind;
  return !schema.is_dense() && schema.ndim == 1 && schema.dtype.itemsize == 1 &&
         (k == DTypeKind::kUInt || k == DTypeKind::kInt);
}

std::optional<int64_t> label_of(const Schema& schema, const uint8_t* payload, uint64_t bytes) {
  if (holds_labels(schema)) {
    const std::optional<double> v = element_as_double(schema.dtype, payload);
    if (!v) return std::nullopt;
    return static_cast<int64_t>(*v);
  }
  if (!holds_text(schema) || bytes > 64) return std::nullopt;
  const char* b = reinterpret_cast<const char*>(payload);
  const char* e = b + bytes;
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (b < e && space(*b)) ++b;
  while (e > b && space(e[-1])) --e;
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(b, e, v);
  if (b == e || ec != std::errc() || ptr != e) return std::nullopt;
  return v;
}

Result<RecordFilter> parse_filter(Catalog& catalog, size_t path, const std::string* label, const std::string* q,
                                  const std::map<std::string, LineList>& names) {
  RecordFilter f;
  const ViewPath& vp = catalog.paths()[path];
  if (q != nullptr && !q->empty()) {
    if (q->size() > kMaxSearchText)
      return invalid_argument("parameter 'q': longer than " + std::to_string(kMaxSearchText) + " bytes");
    f.query = *q;
    for (char c : *q) f.q.push_back(fold_ascii(c));
  }
  if (label == nullptr || label->empty()) return f;
  const size_t colon = label->rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == label->size())
    return invalid_argument("parameter 'label': '" + printable(*label) + "' is not STREAM:VALUE");
  const std::string stream = label->substr(0, colon), value = label->substr(colon + 1);
  for (size_t s = 0; s < vp.streams.size(); ++s)
    if (vp.streams[s].name == stream) f.label_stream = s;
  if (!f.label_stream)
    return invalid_argument("parameter 'label': PATH " + std::to_string(path) + " has no stream '" + printable(stream) +
                            "'");
  {
    ZREC_ASSIGN_OR_RETURN(StoreLease store, catalog.lease(path, *f.label_stream));
    if (!holds_labels(store->schema()) && !holds_text(store->schema()))
      return invalid_argument("parameter 'label': stream '" + printable(stream) +
                              "' is not a label stream (a Dense store of one integer per record, or decimal text)");
  }
  f.label_name = stream;
  const auto list = names.find(stream);
  const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), f.label_value);
  if (ec != std::errc() || ptr != value.data() + value.size()) {
    bool found = false;
    if (list != names.end())
      for (size_t i = 0; i < list->second.size() && !found; ++i)
        if (list->second[i] == value) {
          f.label_value = static_cast<int64_t>(i);
          found = true;
        }
    if (!found)
      return invalid_argument("parameter 'label': '" + printable(value) +
                              "' is neither an integer nor a class name of '" + printable(stream) + "'");
  }
  if (list != names.end() && f.label_value >= 0 && static_cast<uint64_t>(f.label_value) < list->second.size())
    f.label_class = std::string(list->second[static_cast<size_t>(f.label_value)]);
  return f;
}

Result<FilterScan> scan_filter(Catalog& catalog, size_t path, ByteBudget& budget, const SelectionIndex& selection,
                               const RecordFilter& filter, uint64_t cursor, uint64_t scan, uint64_t want) {
  const ViewPath& vp = catalog.paths()[path];
  FilterScan out;
  const uint64_t end = std::min(selection.total(), cursor + std::min(scan, selection.total()));
  uint64_t text_bytes = 0;
  uint64_t pos = std::min(cursor, selection.total());
  std::vector<uint64_t> ids, candidates;
  while (pos < end && out.ids.size() < want && text_bytes < kMaxSearchBytes) {
    const uint64_t stop = std::min(end, pos + (filter.q.empty() ? kLabelChunk : kTextChunk));
    ids.clear();
    for (uint64_t k = pos; k < stop; ++k) ids.push_back(selection.at(k));
    std::vector<char> match(ids.size(), 1);
    if (filter.label_stream) {
      ZREC_ASSIGN_OR_RETURN(StoreLease store, catalog.lease(path, *filter.label_stream));
      RecordBatch batch;
      ZREC_RETURN_IF_ERROR(batch.read(*store, ids, budget, true));
      for (size_t r = 0; r < ids.size(); ++r) {
        const ReadRecord& rec = batch.records()[r];
        const std::optional<int64_t> v =
            rec.read && rec.status.is_ok() ? label_of(store->schema(), rec.payload, rec.payload_bytes) : std::nullopt;
        match[r] = v && *v == filter.label_value;
      }
    }
    if (!filter.q.empty()) {
      std::vector<char> found(ids.size(), 0);
      if (vp.keys)
        for (size_t r = 0; r < ids.size(); ++r) {
          if (!match[r]) continue;
          ZREC_ASSIGN_OR_RETURN(auto key, vp.keys->key(ids[r]));
          found[r] = key && contains_folded(*key, filter.q);
        }
      for (size_t s = 0; s < vp.streams.size(); ++s) {
        candidates.clear();
        std::vector<size_t> rows;
        for (size_t r = 0; r < ids.size(); ++r)
          if (match[r] && !found[r]) rows.push_back(r);
        if (rows.empty()) break;
        ZREC_ASSIGN_OR_RETURN(StoreLease store, catalog.lease(path, s));
        if (!holds_text(store->schema())) continue;
        // The sizes first, so that no large record (a picture, an archive) is read.
        for (size_t r : rows) candidates.push_back(ids[r]);
        RecordBatch locs;
        ZREC_RETURN_IF_ERROR(locs.read(*store, candidates, budget, false));
        std::vector<uint64_t> small;
        std::vector<size_t> small_rows;
        for (size_t c = 0; c < candidates.size(); ++c) {
          const ReadRecord& rec = locs.records()[c];
          if (rec.loc_ok && rec.status.is_ok() && rec.loc.logic_length <= kMaxSearchRecordBytes) {
            small.push_back(candidates[c]);
            small_rows.push_back(rows[c]);
          }
        }
        if (small.empty()) continue;
        RecordBatch batch;
        ZREC_RETURN_IF_ERROR(batch.read(*store, small, budget, true));
        for (size_t c = 0; c < small.size(); ++c) {
          const ReadRecord& rec = batch.records()[c];
          if (!rec.read || !rec.status.is_ok()) continue;
          text_bytes += rec.payload_bytes;
          if (!image_mime(rec.payload, rec.payload_bytes).empty()) continue;  // a picture is no text
          found[small_rows[c]] =
              contains_folded({reinterpret_cast<const char*>(rec.payload), rec.payload_bytes}, filter.q);
        }
      }
      for (size_t r = 0; r < ids.size(); ++r) match[r] = match[r] && found[r];
    }
    // Stop right after the match that fills the page, so that the next request goes on there.
    uint64_t taken = ids.size();
    for (size_t r = 0; r < ids.size(); ++r) {
      if (!match[r]) continue;
      out.ids.push_back(ids[r]);
      if (out.ids.size() == want) {
        taken = r + 1;
        break;
      }
    }
    pos += taken;
    out.examined += taken;
  }
  if (pos < selection.total()) out.next = pos;
  return out;
}

}  // namespace zrec::cli::view
