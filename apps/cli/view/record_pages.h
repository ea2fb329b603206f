// A page of the records grid: the IDs of a selection (cat's SELECTION syntax), or of a
// seeded sample drawn from it exactly as `zrec cat --sample N --seed K` draws (the same
// RecordOrder, formats/record_order.h, so the same IDs in the same order), cut to
// [offset, offset + limit); for each ID one row, with one cell per stream (a PATH that
// is one store has one stream).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "zrec/status.h"

#include "cli/report/json.h"
#include "cli/view/byte_budget.h"
#include "cli/view/line_list.h"
#include "cli/view/record_filter.h"
#include "cli/view/token_text.h"
#include "cli/view/view_catalog.h"

namespace zrec::cli::view {

// Rows per page at most (a page's thumbnails and text are bounded by this).
inline constexpr uint64_t kMaxPageRows = 100;

struct PageQuery {
  size_t path = 0;
  std::string selection;           // empty: every record
  std::optional<uint64_t> sample;  // draw this many IDs (with replacement) from the selection
  uint64_t seed = 0;
  uint64_t offset = 0;  // first row of the page, into the selection or the sample
  uint64_t limit = 48;  // 1..kMaxPageRows
  // label=STREAM:VALUE and q=TEXT (record_filter.h): the rows are the selection's samples
  // that match, found from position `cursor` on, examining at most `scan` positions.
  RecordFilter filter;
  uint64_t cursor = 0;
  uint64_t scan = kDefaultFilterScan;
};

// Writes the page object: "path", "length" (records in every stream: the shortest),
// "selected" (IDs the selection holds), "total" (rows: selected, or the sample's size),
// "offset", "limit", "sample", "seed", "streams" (names), "rows": [{"id", "key" (with
// --keys), "cells": [{"stream", "stored_bytes", "logical_bytes", "shape", "error" or the
// look's keys (record_look.h)}]}]. A bad selection is kInvalidArgument with cat's message.
// A stream with a vocabulary (view --vocab) also gets each cell's "tokens_text"; a label
// stream with class names (view --labels, the card) each cell's "label_name".
// With a filter (q.filter.active()), "sample" must be null and "offset" is not used: the
// rows are the matches, and the page also has "filter": {"label": {"stream", "value",
// "name"?} or null, "q": TEXT or null}, "cursor", "scan", "examined" (positions of the
// selection examined) and "next_cursor" (the position to ask from next; null once the
// selection's end was reached); "total" is null.
Status write_page(JsonWriter& j, Catalog& catalog, ByteBudget& budget, const PageQuery& q,
                  const Vocabularies& vocabs = {}, const std::map<std::string, LineList>& labels = {});

// The record count a PATH's rows range over: its store's length, or for a root the
// shortest of its streams' lengths (a sample exists in every stream).
Result<uint64_t> path_length(Catalog& catalog, size_t path);

}  // namespace zrec::cli::view
