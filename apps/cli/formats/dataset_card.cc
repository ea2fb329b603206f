// The dataset card's JSON (see dataset_card.h).
#include "cli/formats/dataset_card.h"

#include <algorithm>
#include <cctype>

#include "cli/formats/json_scan.h"
#include "cli/formats/json_string.h"

namespace zrec::cli {

namespace {

class CardParser {
 public:
  explicit CardParser(std::string_view s) : in_(s, "card: not valid") {}

  Result<DatasetCard> card() {
    DatasetCard out;
    bool versioned = false;
    in_.space();
    if (!in_.eat('{')) return in_.bad("expected '{' (a card is one JSON object)");
    ZREC_RETURN_IF_ERROR(members([&](const std::string& key) -> Status {
      if (key == "zrec_card") {
        std::string v;
        if (!std::isdigit(static_cast<unsigned char>(in_.peek()))) return in_.bad("\"zrec_card\" is a version number");
        in_.number(v);
        if (v != std::to_string(kCardVersion))
          return in_.bad("card version " + v + " is not " + std::to_string(kCardVersion) + " (a newer zrec wrote it)");
        versioned = true;
        return Status::ok();
      }
      if (key == "labels" || key == "vocab") return names_by_stream(key, key == "labels" ? out.labels : out.vocab);
      const auto& keys = card_text_keys();
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) {
        if (in_.peek() != '"') return in_.bad("\"" + key + "\" holds a string");
        return in_.string(out.text[key]);
      }
      const size_t from = in_.at();
      ZREC_RETURN_IF_ERROR(in_.skip_value());
      out.unknown.emplace_back(key, std::string(in_.text_from(from)));
      return Status::ok();
    }));
    in_.space();
    if (!in_.at_end()) return in_.bad("text after the card");
    if (!versioned) return in_.bad("no \"zrec_card\" version");
    return out;
  }

 private:
  // The members of an object whose '{' was taken: fn(key) reads each value.
  template <typename Fn>
  Status members(Fn fn) {
    std::vector<std::string> seen;
    in_.space();
    if (in_.eat('}')) return Status::ok();
    for (;;) {
      in_.space();
      if (in_.peek() != '"') return in_.bad("expected a key in double quotes");
      std::string key;
      ZREC_RETURN_IF_ERROR(in_.string(key));
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) return in_.bad("the key \"" + key + "\" is repeated");
      seen.push_back(key);
      in_.space();
      if (!in_.eat(':')) return in_.bad("expected ':' after a key");
      in_.space();
      ZREC_RETURN_IF_ERROR(fn(key));
      in_.space();
      if (in_.eat('}')) return Status::ok();
      if (!in_.eat(',')) return in_.bad("expected ',' or '}'");
    }
  }

  Status names_by_stream(const std::string& what, std::map<std::string, std::vector<std::string>>& out) {
    const std::string rule = "\"" + what + "\" holds an object of arrays of strings";
    if (!in_.eat('{')) return in_.bad(rule);
    return members([&](const std::string& stream) -> Status {
      std::vector<std::string>& names = out[stream];
      if (!in_.eat('[')) return in_.bad(rule);
      in_.space();
      if (in_.eat(']')) return Status::ok();
      for (;;) {
        in_.space();
        if (in_.peek() != '"') return in_.bad(rule);
        ZREC_RETURN_IF_ERROR(in_.string(names.emplace_back()));
        in_.space();
        if (in_.eat(']')) return Status::ok();
        if (!in_.eat(',')) return in_.bad("expected ',' or ']'");
      }
    });
  }

  JsonScanner in_;
};

void append_names(std::string& out, const std::string& key, const std::map<std::string, std::vector<std::string>>& by,
                  bool pretty) {
  out += pretty ? ",\n  " : ", ";
  append_json_string(out, key);
  out += ": {";
  bool first = true;
  for (const auto& [stream, names] : by) {
    if (pretty) out += first ? "\n    " : ",\n    ";
    else if (!first) out += ", ";
    first = false;
    append_json_string(out, stream);
    out += ": [";
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0) out += ", ";
      append_json_string(out, names[i]);
    }
    out += "]";
  }
  out += pretty && !first ? "\n  }" : "}";
}

}  // namespace

const std::vector<std::string>& card_text_keys() {
  static const std::vector<std::string> keys = {"name", "description", "license", "citation", "url", "version"};
  return keys;
}

Result<DatasetCard> parse_card(std::string_view json) { return CardParser(json).card(); }

std::string card_json(const DatasetCard& card, bool pretty) {
  const char* next = pretty ? ",\n  " : ", ";  // between members
  std::string out = std::string(pretty ? "{\n  " : "{") + "\"zrec_card\": " + std::to_string(kCardVersion);
  for (const std::string& key : card_text_keys()) {
    const auto it = card.text.find(key);
    if (it == card.text.end()) continue;
    out += next;
    append_json_string(out, key);
    out += ": ";
    append_json_string(out, it->second);
  }
  if (!card.labels.empty()) append_names(out, "labels", card.labels, pretty);
  if (!card.vocab.empty()) append_names(out, "vocab", card.vocab, pretty);
  for (const auto& [key, raw] : card.unknown) {
    out += next;
    append_json_string(out, key);
    out += ": " + raw;
  }
  return out + (pretty ? "\n}\n" : "}");
}

std::string card_summary(const DatasetCard& card) {
  std::string t;
  for (const std::string& key : card_text_keys())
    if (card.text.count(key) > 0) t += (t.empty() ? "" : ", ") + key;
  for (const auto& [stream, names] : card.labels)
    t += (t.empty() ? "" : "; ") + ("labels " + stream + " (" + std::to_string(names.size()) + ")");
  for (const auto& [stream, tokens] : card.vocab)
    t += (t.empty() ? "" : "; ") + ("vocab " + stream + " (" + std::to_string(tokens.size()) + ")");
  return t.empty() ? "nothing" : t;
}

std::vector<std::string> names_of_lines(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.emplace_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace zrec::cli
