// Reading a dataset's card (zrec card; docs/format.md §13) for the commands that use its
// names: card, view, info, cat --format jsonl, and the copies of a root.
#pragma once

#include <optional>
#include <string>

#include "zrec/remote.h"
#include "zrec/status.h"

#include "cli/formats/dataset_card.h"

namespace zrec::cli {

// The card of the root or store at `path` (a URL too), or nullopt when it has none;
// kMalformed naming the file when it breaks the card's rules.
Result<std::optional<DatasetCard>> read_dataset_card(const std::string& path, const Context& ctx);

}  // namespace zrec::cli
