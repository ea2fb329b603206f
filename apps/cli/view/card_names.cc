// Names from the datasets' cards for zrec view (see card_names.h).
#include "cli/view/card_names.h"

#include <algorithm>

#include "cli/formats/dataset_card.h"
#include "cli/roots/card_file.h"

namespace zrec::cli::view {

namespace {

// The names as a LineList holds them: one a line (a newline inside a name, which only a
// hand-edited card can hold, becomes a space).
LineList line_list(const std::vector<std::string>& names) {
  std::vector<uint8_t> bytes;
  for (const std::string& name : names) {
    for (char c : name) bytes.push_back(static_cast<uint8_t>(c == '\n' ? ' ' : c));
    bytes.push_back('\n');
  }
  return LineList(std::move(bytes));
}

// The stream of `p` that a card's `name` means: a root's stream of that name, or a lone
// store's own stream (named "records" in its card); empty when none.
std::string view_stream(const ViewPath& p, const std::string& name) {
  if (!p.root) return name == "records" && !p.streams.empty() ? p.streams.front().name : "";
  for (const ViewStream& s : p.streams)
    if (s.name == name) return s.name;
  return "";
}

}  // namespace

Status add_card_names(const Catalog& catalog, const Context& ctx, std::map<std::string, LineList>& labels,
                      Vocabularies& vocabs) {
  for (const ViewPath& p : catalog.paths()) {
    ZREC_ASSIGN_OR_RETURN(const std::optional<DatasetCard> card, read_dataset_card(p.path, ctx));
    if (!card) continue;
    for (const auto& [name, names] : card->labels)
      if (const std::string s = view_stream(p, name); !s.empty() && labels.count(s) == 0)
        labels.emplace(s, line_list(names));
    for (const auto& [name, tokens] : card->vocab)
      if (const std::string s = view_stream(p, name); !s.empty() && vocabs.count(s) == 0)
        vocabs.emplace(s, Vocabulary(line_list(tokens)));
  }
  return Status::ok();
}

}  // namespace zrec::cli::view
