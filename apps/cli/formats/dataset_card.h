// A dataset card: what a root's (or a store's) data means, kept with the data in one
// JSON file (docs/format.md, "The dataset card"): text fields (name, description,
// license, citation, url, version), class names per label stream and a vocabulary per
// token stream. `zrec card` writes it; view, info and cat read its names.
//
//   {"zrec_card": 1, "description": "...", "license": "CC-BY-4.0",
//    "labels": {"cls": ["cat", "dog"]}, "vocab": {"text": ["<pad>", "the"]}}
//
// Keys this version does not know are kept as they were written (a newer zrec's), so a
// card edited here loses nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zrec/status.h"

namespace zrec::cli {

inline constexpr int kCardVersion = 1;

struct DatasetCard {
  std::map<std::string, std::string> text;                   // by card_text_keys()
  std::map<std::string, std::vector<std::string>> labels;    // stream -> class names, by class
  std::map<std::string, std::vector<std::string>> vocab;     // stream -> tokens, by token ID
  std::vector<std::pair<std::string, std::string>> unknown;  // key, raw JSON value

  bool empty() const { return text.empty() && labels.empty() && vocab.empty() && unknown.empty(); }
};

// The text fields a card holds, in the order they are written and shown: name,
// description, license, citation, url, version.
const std::vector<std::string>& card_text_keys();

// The card `json` holds; kInvalidArgument naming the byte and the rule broken ("card:
// not valid at byte 12: \"labels\" holds an object of arrays of strings").
Result<DatasetCard> parse_card(std::string_view json);

// The card as JSON text: as the file keeps it (`pretty`: one key a line, ending with a
// newline), or on one line, to embed in a --json object.
std::string card_json(const DatasetCard& card, bool pretty = true);

// What a card holds, in a few words: "description, license; labels cls (10); vocab
// text (50257)", or "nothing".
std::string card_summary(const DatasetCard& card);

// The lines of a names file (class names, tokens): one per line, "\n" or "\r\n" ended,
// a last line without its newline kept, an empty file none.
std::vector<std::string> names_of_lines(std::string_view text);

}  // namespace zrec::cli
