// The class names and vocabularies that `zrec view` takes from the datasets' cards
// (zrec card): for each PATH whose card names a stream's labels or tokens, the names go
// where --labels and --vocab put theirs, unless a side file already named that stream
// (a side file wins: it is what the user asked for on this run).
#pragma once

#include <map>
#include <string>

#include "zrec/remote.h"
#include "zrec/status.h"

#include "cli/view/line_list.h"
#include "cli/view/token_text.h"
#include "cli/view/view_catalog.h"

namespace zrec::cli::view {

// Adds the cards' names to `labels` and `vocabs` (by stream name, as the side files'
// are). A card that cannot be read or parsed is an error naming it.
Status add_card_names(const Catalog& catalog, const Context& ctx, std::map<std::string, LineList>& labels,
                      Vocabularies& vocabs);

}  // namespace zrec::cli::view
