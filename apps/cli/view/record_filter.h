// The records grid's filters (`api/records?label=STREAM:VALUE`, `q=TEXT`): which of a
// selection's samples have that label value, and which hold TEXT in their key or in one
// of their text streams. Each request does bounded work: it examines at most `scan`
// positions of the selection (reads their label and text records, the latter up to
// kMaxSearchRecordBytes each and kMaxSearchBytes a request) and hands back the position
// to go on from, so a page over millions of samples, local or remote, asks again instead
// of one request reading them all.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "zrec/schema.h"
#include "zrec/status.h"

#include "cli/formats/selection.h"
#include "cli/view/byte_budget.h"
#include "cli/view/line_list.h"
#include "cli/view/view_catalog.h"

namespace zrec::cli::view {

// Positions of the selection examined by one request: the default, and at most.
inline constexpr uint64_t kDefaultFilterScan = 4096;
inline constexpr uint64_t kMaxFilterScan = 65536;
// Text records larger than this are not searched; a request stops (and hands back its
// cursor) once it has read this many bytes of text records.
inline constexpr uint64_t kMaxSearchRecordBytes = uint64_t{1} << 20;
inline constexpr uint64_t kMaxSearchBytes = uint64_t{32} << 20;
// The longest search text.
inline constexpr size_t kMaxSearchText = 256;

// A label stream: a Dense store of one integer (or bool) per record.
bool holds_labels(const Schema& schema);
// A stream whose records may be text (or JSON): Ragged bytes of one dimension. Its
// records can be labels too, as decimal text (WebDataset's .cls members).
bool holds_text(const Schema& schema);
// The label a record holds: a label stream's integer, or a text record's decimal integer
// (surrounding whitespace ignored); none for anything else. `payload` is the record's
// elements (a Ragged record's shape prefix taken off).
std::optional<int64_t> label_of(const Schema& schema, const uint8_t* payload, uint64_t bytes);

struct RecordFilter {
  // label=STREAM:VALUE: the stream's index in the PATH, its name, the value and its class
  // name (when --labels or the card names it).
  std::optional<size_t> label_stream;
  std::string label_name;
  int64_t label_value = 0;
  std::optional<std::string> label_class;
  std::string q;      // q=TEXT, lower-cased (ASCII); empty: none
  std::string query;  // q=TEXT as given
  bool active() const { return label_stream.has_value() || !q.empty(); }
};

// Parses `label` ("STREAM:VALUE", VALUE an integer or a class name of `names`) and `q`
// (either may be null). kInvalidArgument names the parameter.
Result<RecordFilter> parse_filter(Catalog& catalog, size_t path, const std::string* label, const std::string* q,
                                  const std::map<std::string, LineList>& names);

struct FilterScan {
  std::vector<uint64_t> ids;     // the matching IDs, in selection order
  uint64_t examined = 0;         // positions examined
  std::optional<uint64_t> next;  // the position to go on from; none past the selection's end
};

// Examines the selection's positions from `cursor` on, at most `scan` of them, until
// `want` match (or kMaxSearchBytes of text is read).
Result<FilterScan> scan_filter(Catalog& catalog, size_t path, ByteBudget& budget, const SelectionIndex& selection,
                               const RecordFilter& filter, uint64_t cursor, uint64_t scan, uint64_t want);

}  // namespace zrec::cli::view
