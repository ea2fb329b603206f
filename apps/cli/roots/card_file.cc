// read_dataset_card: see card_file.h.
#include "cli/roots/card_file.h"

#include "zrec/dataset.h"

namespace zrec::cli {

Result<std::optional<DatasetCard>> read_dataset_card(const std::string& path, const Context& ctx) {
  ZREC_ASSIGN_OR_RETURN(const std::optional<std::string> bytes, read_card(path, ctx));
  if (!bytes) return std::optional<DatasetCard>();
  auto card = parse_card(*bytes);
  if (!card.is_ok()) return malformed("'" + redact_url(join_path(path, kCardFile)) + "': " + card.status().message());
  return std::optional<DatasetCard>(std::move(card).value());
}

}  // namespace zrec::cli
