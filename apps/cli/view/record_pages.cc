// write_page (see record_pages.h).
#include "cli/view/record_pages.h"

#include <algorithm>
#include <vector>

#include "cli/formats/record_format.h"
#include "cli/formats/record_order.h"
#include "cli/formats/selection.h"
#include "cli/view/record_look.h"
#include "cli/view/record_reader.h"

namespace zrec::cli::view {

namespace {

void write_shape(JsonWriter& j, const std::vector<uint64_t>& dims) {
  j.key("shape").begin_array();
  for (uint64_t d : dims) j.value(d);
  j.end_array();
}

}  // namespace

Result<uint64_t> path_length(Catalog& catalog, size_t path) {
  uint64_t length = UINT64_MAX;
  for (size_t s = 0; s < catalog.paths()[path].streams.size(); ++s) {
    ZREC_ASSIGN_OR_RETURN(StoreLease store, catalog.lease(path, s));
    length = std::min(length, store->length());
  }
  return length;
}

Status write_page(JsonWriter& j, Catalog& catalog, ByteBudget& budget, const PageQuery& q, const Vocabularies& vocabs,
                  const std::map<std::string, LineList>& labels) {
  const ViewPath& vp = catalog.paths()[q.path];
  ZREC_ASSIGN_OR_RETURN(uint64_t length, path_length(catalog, q.path));
  std::vector<IdRun> runs{IdRun{0, 1, false, length}};
  if (!q.selection.empty()) {
    ZREC_ASSIGN_OR_RETURN(auto items, parse_selection(q.selection));
    ZREC_ASSIGN_OR_RETURN(runs, resolve_runs(items, length));
  }
  const std::vector<uint64_t> no_list;
  const SelectionIndex selection(runs, no_list);
  const uint64_t selected = selection.total();
  const bool filtered = q.filter.active();
  if (filtered && q.sample) return invalid_argument("sample: a sample cannot be filtered by label or q");
  ZREC_ASSIGN_OR_RETURN(const RecordOrder order,
                        RecordOrder::of(selection, {.sample = q.sample, .seed = q.seed, .option = "sample"}));
  const uint64_t total = order.total();
  std::vector<uint64_t> ids;
  FilterScan found;
  if (filtered) {
    ZREC_ASSIGN_OR_RETURN(found, scan_filter(catalog, q.path, budget, selection, q.filter, q.cursor, q.scan, q.limit));
    ids = found.ids;
  } else {
    for (uint64_t i = q.offset; i < total && i - q.offset < q.limit; ++i) ids.push_back(order.id_at(i));
  }

  j.begin_object();
  j.key("path").value(uint64_t{q.path}).key("length").value(length).key("selected").value(selected);
  j.key("total");
  if (filtered) j.null();
  else j.value(total);
  j.key("offset").value(q.offset).key("limit").value(q.limit);
  j.key("sample");
  if (q.sample) j.value(*q.sample);
  else j.null();
  j.key("seed").value(q.seed);
  if (filtered) {
    j.key("filter").begin_object().key("label");
    if (q.filter.label_stream) {
      j.begin_object().key("stream").value(q.filter.label_name).key("value").value(q.filter.label_value);
      if (q.filter.label_class) j.key("name").value(*q.filter.label_class);
      j.end_object();
    } else {
      j.null();
    }
    j.key("q");
    if (q.filter.q.empty()) j.null();
    else j.value(q.filter.query);
    j.end_object();
    j.key("cursor").value(q.cursor).key("scan").value(q.scan).key("examined").value(found.examined);
    j.key("next_cursor");
    if (found.next) j.value(*found.next);
    else j.null();
  }
  j.key("streams").begin_array();
  for (const ViewStream& s : vp.streams) j.value(s.name);
  j.end_array();

  // Read stream by stream (one lease at a time), then write row by row.
  std::vector<std::string> cells(vp.streams.size() * ids.size());
  std::vector<std::optional<std::string>> stream_keys(ids.size());  // from the __key__ stream
  for (size_t s = 0; s < vp.streams.size(); ++s) {
    ZREC_ASSIGN_OR_RETURN(StoreLease store, catalog.lease(q.path, s));
    const Schema& schema = store->schema();
    const Vocabulary* vocab = find_vocabulary(vocabs, vp.streams[s].name);
    const auto names_it = labels.find(vp.streams[s].name);
    const LineList* names =
        names_it != labels.end() && (holds_labels(schema) || holds_text(schema)) ? &names_it->second : nullptr;
    // A Dense picture store's cells need no payload: the browser asks for each picture.
    const std::optional<ImageLayout> pictures = dense_image_layout(schema);
    RecordBatch batch;
    ZREC_RETURN_IF_ERROR(batch.read(*store, ids, budget, !pictures.has_value()));
    for (size_t r = 0; r < ids.size(); ++r) {
      const ReadRecord& rec = batch.records()[r];
      JsonWriter c;
      c.begin_object().key("stream").value(uint64_t{s});
      if (rec.loc_ok) {
        c.key("stored_bytes").value(uint64_t{rec.loc.phys_length});
        c.key("logical_bytes").value(uint64_t{rec.loc.logic_length});
      }
      if (pictures) {
        write_shape(c, rec.dims);
        if (rec.status.is_ok()) write_look(c, schema, rec.dims, nullptr, rec.loc.logic_length, kGridCell);
      } else if (rec.read) {
        write_shape(c, rec.dims);
        write_look(c, schema, rec.dims, rec.payload, rec.payload_bytes, kGridCell);
        if (rec.status.is_ok())
          write_tokens_text(c, vocab, schema.dtype, rec.payload, rec.payload_bytes, kGridTokensTextBytes);
        if (rec.status.is_ok() && names != nullptr) {
          const std::optional<int64_t> v = label_of(schema, rec.payload, rec.payload_bytes);
          if (v && *v >= 0 && static_cast<uint64_t>(*v) < names->size())
            c.key("label_name").value((*names)[static_cast<size_t>(*v)]);
        }
      } else if (rec.status.is_ok()) {
        c.key("look").value("large");  // past kMaxShownRecordBytes: open the record
      }
      if (!rec.status.is_ok()) c.key("error").value(rec.status.message());
      c.end_object();
      cells[r * vp.streams.size() + s] = c.str();
      if (vp.key_stream == s && rec.read && rec.status.is_ok())
        stream_keys[r] = std::string(reinterpret_cast<const char*>(rec.payload), rec.payload_bytes);
    }
  }
  j.key("rows").begin_array();
  for (size_t r = 0; r < ids.size(); ++r) {
    j.begin_object().key("id").value(ids[r]);
    if (vp.keys) {
      ZREC_ASSIGN_OR_RETURN(auto key, vp.keys->key(ids[r]));
      j.key("key");
      if (key) j.value(*key);
      else j.null();
    } else if (vp.key_stream) {
      j.key("key");
      if (stream_keys[r]) j.value(*stream_keys[r]);
      else j.null();
    }
    j.key("cells").begin_array();
    for (size_t s = 0; s < vp.streams.size(); ++s) j.raw(cells[r * vp.streams.size() + s]);
    j.end_array().end_object();
  }
  j.end_array().end_object();
  return Status::ok();
}

}  // namespace zrec::cli::view
