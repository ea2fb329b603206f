// zrec card: the dataset card of a root or store (what the data means: description,
// license, citation, class names, vocabularies; cli/formats/dataset_card.h), shown,
// edited (written by zrec::write_card under the writer's lock, atomically), or printed
// as Croissant JSON-LD (cli/formats/croissant.h).
#include <algorithm>
#include <set>

#include <CLI/CLI.hpp>

#include "zrec/dataset.h"
#include "zrec/digest.h"
#include "zrec/remote.h"

#include "cli/app/command.h"
#include "cli/diff/diff_side.h"
#include "cli/formats/croissant.h"
#include "cli/formats/dataset_card.h"
#include "cli/formats/path_name.h"
#include "cli/formats/printable.h"
#include "cli/options/json_option.h"
#include "cli/options/usage_error.h"
#include "cli/os/side_file.h"
#include "cli/report/command_report.h"
#include "cli/report/console.h"
#include "cli/roots/card_file.h"

namespace zrec::cli {

namespace {

struct CardArgs {
  std::string path;
  std::vector<std::string> sets;  // --set KEY=VALUE (VALUE "@FILE": the file's text; empty: removed)
  std::string description, license, citation;
  std::vector<std::string> labels, vocabs;  // STREAM=FILE ("STREAM=": removed)
  std::string from;                         // --from FILE: a whole card (cat --format tar writes one)
  bool remove = false;
  bool croissant = false;
  bool json = false;

  bool edits() const {
    return !sets.empty() || !description.empty() || !license.empty() || !citation.empty() || !labels.empty() ||
           !vocabs.empty() || !from.empty() || remove;
  }
};

// A side file's text (a citation, class names, a vocabulary), at most a card's size.
Result<std::string> side_text(const std::string& file, const std::string& option) {
  ZREC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_side_file(file, option, kMaxCardBytes));
  return std::string(bytes.begin(), bytes.end());
}

std::pair<std::string, std::string> split_spec(const std::string& spec, const std::string& option,
                                               const char* example) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError(option + " '" + printable(spec) + "': expected " + example);
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

Status set_text(DatasetCard& card, const std::string& key, const std::string& value, const std::string& option) {
  const auto& keys = card_text_keys();
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    std::string list;
    for (const std::string& k : keys) list += (list.empty() ? "" : ", ") + k;
    throw UsageError(option + ": '" + printable(key) + "' is no field of a card (" + list + ")");
  }
  if (value.empty()) {
    card.text.erase(key);
    return Status::ok();
  }
  if (value.starts_with('@')) {
    ZREC_ASSIGN_OR_RETURN(std::string text, side_text(value.substr(1), option + " " + key));
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
    card.text[key] = std::move(text);
  } else {
    card.text[key] = value;
  }
  return Status::ok();
}

// The streams a card may name: a root's, or "records" for a lone store's one stream.
std::string stream_list(const DiffSide& side) {
  std::string list;
  for (const DiffStream& s : side.streams) list += (list.empty() ? "" : ", ") + printable(s.name);
  return list;
}

// Refuses names for `stream` unless it is a stream of `side` holding integers.
void check_named_stream(const DiffSide& side, const std::string& stream, const std::string& what, bool labels) {
  Store* store = side.find(stream);
  if (store == nullptr)
    throw UsageError(what + ": '" + printable(stream) + "' is not one of the streams (" + stream_list(side) + ")");
  const Schema& schema = store->schema();
  const DTypeKind kind = schema.dtype.kind;
  // A ragged stream of single bytes holds blobs (images, text), not numbers that index names.
  const bool blobs = !schema.is_dense() && schema.dtype.itemsize == 1;
  if ((kind != DTypeKind::kInt && kind != DTypeKind::kUInt) || blobs)
    throw UsageError(what + ": stream '" + printable(stream) + "' holds '" + schema.dtype.str() + "' records, and " +
                     (labels ? "class names name integer labels" : "a vocabulary names integer token IDs"));
}

Status set_names(DatasetCard& card, const DiffSide& side, const std::string& spec, bool labels) {
  const std::string option = labels ? "--labels" : "--vocab";
  const auto [stream, file] =
      split_spec(spec, option, labels ? "STREAM=FILE, e.g. cls=classes.txt" : "STREAM=FILE, e.g. tokens=vocab.txt");
  check_named_stream(side, stream, option + " '" + printable(spec) + "'", labels);
  auto& by_stream = labels ? card.labels : card.vocab;
  if (file.empty()) {
    by_stream.erase(stream);
    return Status::ok();
  }
  ZREC_ASSIGN_OR_RETURN(const std::string text, side_text(file, option));
  std::vector<std::string> names = names_of_lines(text);
  if (names.empty()) return invalid_argument(option + " '" + printable(file) + "' holds no line");
  by_stream[stream] = std::move(names);
  return Status::ok();
}

Result<DatasetCard> read_existing_card(const std::string& path, const GlobalOptions& g) {
  ZREC_ASSIGN_OR_RETURN(std::optional<DatasetCard> card, read_dataset_card(path, g.read_context(path)));
  return card ? std::move(*card) : DatasetCard{};
}

Status edit_card(const CardArgs& a, DiffSide side, const GlobalOptions& g) {
  if (is_url(a.path))
    throw UsageError("'" + redact_url(a.path) + "' is a URL: zrec card edits the cards of local roots and stores");
  ZREC_ASSIGN_OR_RETURN(DatasetCard card, read_existing_card(a.path, g));
  if (a.remove) {
    if (!a.sets.empty() || !a.labels.empty() || !a.vocabs.empty() || !a.description.empty() || !a.license.empty() ||
        !a.citation.empty() || !a.from.empty())
      throw UsageError("--remove takes the whole card away: give no other change with it");
    side.streams.clear();  // their readers' locks would stand in the writer's way
    ZREC_RETURN_IF_ERROR(write_card(a.path, std::nullopt, g.context(Work::kWrite)));
    CommandReport report("card", g, a.json);
    report.set("path", a.path).set("root", side.root).set_null("card");
    return report.finish("removed the card of '" + printable(a.path) + "'");
  }
  if (!a.from.empty()) {
    ZREC_ASSIGN_OR_RETURN(const std::string text, side_text(a.from, "--from"));
    auto parsed = parse_card(text);
    if (!parsed.is_ok()) return invalid_argument("--from '" + printable(a.from) + "': " + parsed.status().message());
    card = std::move(parsed).value();
    for (const auto& [stream, names] : card.labels) check_named_stream(side, stream, "--from: labels", true);
    for (const auto& [stream, tokens] : card.vocab) check_named_stream(side, stream, "--from: vocab", false);
  }
  for (const std::string& spec : a.sets) {
    const auto [key, value] = split_spec(spec, "--set", "KEY=VALUE, e.g. license=CC-BY-4.0");
    ZREC_RETURN_IF_ERROR(set_text(card, key, value, "--set"));
  }
  if (!a.description.empty()) ZREC_RETURN_IF_ERROR(set_text(card, "description", a.description, "--description"));
  if (!a.license.empty()) ZREC_RETURN_IF_ERROR(set_text(card, "license", a.license, "--license"));
  if (!a.citation.empty()) ZREC_RETURN_IF_ERROR(set_text(card, "citation", a.citation, "--citation"));
  for (const std::string& spec : a.labels) ZREC_RETURN_IF_ERROR(set_names(card, side, spec, true));
  for (const std::string& spec : a.vocabs) ZREC_RETURN_IF_ERROR(set_names(card, side, spec, false));
  // A lone store's reader holds meta.zr's shared lock, which the write's writer lock
  // would wait for: the streams were needed to check the names, not any more.
  side.streams.clear();
  const std::string json = card_json(card);
  ZREC_RETURN_IF_ERROR(write_card(a.path, json, g.context(Work::kWrite)));
  CommandReport report("card", g, a.json);
  report.set("path", a.path).set("root", side.root).set_json("card", card_json(card, /*pretty=*/false));
  return report.finish("wrote the card of '" + printable(a.path) + "': " + card_summary(card));
}

std::string shown_card(const DatasetCard& card, const DiffSide& side) {
  std::string t = (side.root ? "root '" : "store '") + printable(redact_url(side.path)) + "'";
  if (card.empty()) return t + ": no card (zrec card PATH --set description=... writes one)\n";
  t += ":\n";
  for (const std::string& key : card_text_keys()) {
    const auto it = card.text.find(key);
    if (it == card.text.end()) continue;
    std::string value = it->second;
    // A multi-line value (a BibTeX citation) keeps its lines, indented under the key.
    for (size_t at = 0; (at = value.find('\n', at)) != std::string::npos; at += 3) value.replace(at, 1, "\n  ");
    t += key + ": " + value + "\n";
  }
  const auto first_names = [](const std::vector<std::string>& names) {
    std::string t;
    for (size_t i = 0; i < names.size() && i < 8; ++i) t += (i ? ", " : "") + printable(names[i]);
    return names.size() > 8 ? t + ", ..." : t;
  };
  for (const auto& [stream, names] : card.labels)
    t +=
        "labels " + printable(stream) + ": " + std::to_string(names.size()) + " classes (" + first_names(names) + ")\n";
  for (const auto& [stream, tokens] : card.vocab)
    t +=
        "vocab " + printable(stream) + ": " + std::to_string(tokens.size()) + " tokens (" + first_names(tokens) + ")\n";
  for (const auto& [key, raw] : card.unknown) t += "(kept, not known here) " + printable(key) + "\n";
  return t;
}

// Every file of the dataset, with its size and SHA-256, and each stream's type.
Result<CroissantDataset> describe_for_croissant(const std::string& path, DatasetCard card, const DiffSide& side,
                                                const GlobalOptions& g) {
  CroissantDataset d;
  d.name = card.text.count("name") > 0 ? card.text.at("name") : base_name(path);
  d.samples = side.length;
  d.card = std::move(card);
  const auto file = [&](const std::string& relative) -> Result<CroissantFile> {
    ZREC_ASSIGN_OR_RETURN(const FileHash h, file_sha256(join_path(path, relative), g.read_context(path)));
    return CroissantFile{relative, h.bytes, hash_to_hex(h.sha256)};
  };
  if (side.root) {
    ZREC_ASSIGN_OR_RETURN(CroissantFile marker, file(kRootMarkerFile));
    d.other_files.push_back(std::move(marker));
  }
  for (const DiffStream& s : side.streams) {
    CroissantStream cs;
    cs.name = side.root ? s.name : "";
    cs.schema = s.store->schema();
    std::string first;
    if (s.store->length() > 0) {
      ZREC_ASSIGN_OR_RETURN(first, record_payload(*s.store, 0));
    }
    cs.data_type = croissant_data_type(
        cs.schema, {reinterpret_cast<const uint8_t*>(first.data()), std::min<size_t>(first.size(), 4096)});
    std::vector<std::string> names = {kMetaFile};
    for (uint32_t k = 0; k < s.store->data_shards(); ++k) names.push_back(data_file_name(k));
    if (s.store->codec() == Codec::kZstdDict) names.push_back(kDictFile);
    for (const std::string& n : names) {
      ZREC_ASSIGN_OR_RETURN(CroissantFile f, file(side.root ? s.name + "/" + n : n));
      cs.files.push_back(std::move(f));
    }
    if (!side.root) cs.name = "records";
    d.streams.push_back(std::move(cs));
  }
  return d;
}

Status run_card(const CardArgs& a, const GlobalOptions& g) {
  if (a.croissant && a.edits()) throw UsageError("--croissant prints the card: give no change with it");
  Context ctx = g.read_context(a.path);
  ctx.snapshot_if_busy = !g.wait;
  ZREC_ASSIGN_OR_RETURN(DiffSide side, open_diff_side(a.path, ctx));
  if (a.edits()) return edit_card(a, std::move(side), g);
  ZREC_ASSIGN_OR_RETURN(DatasetCard card, read_existing_card(a.path, g));
  ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));
  if (a.croissant) {
    if (a.json) throw UsageError("--croissant prints JSON-LD already: give --json or --croissant");
    ZREC_ASSIGN_OR_RETURN(const CroissantDataset d, describe_for_croissant(a.path, std::move(card), side, g));
    ZREC_RETURN_IF_ERROR(out.write(croissant_json(d)));
    return out.flush();
  }
  CommandReport report("card", g, a.json);
  if (a.json) {
    report.set("path", redact_url(a.path)).set("root", side.root);
    if (card.empty()) report.set_null("card");
    else report.set_json("card", card_json(card, /*pretty=*/false));
    return report.finish("");
  }
  ZREC_RETURN_IF_ERROR(out.write(shown_card(card, side)));
  ZREC_RETURN_IF_ERROR(out.flush());
  return report.finish("");
}

}  // namespace

Command register_card(CLI::App& root, const GlobalOptions& global) {
  auto args = std::make_shared<CardArgs>();
  CLI::App* cmd =
      root.add_subcommand("card", "Show, write or export the dataset card: description, license, class names");
  cmd->add_option("path", args->path, "The root or store (a path, or a URL to show)")->required();
  cmd->add_option("--set", args->sets,
                  "Set a text field, KEY=VALUE (name, description, license, citation, url, version; VALUE @FILE "
                  "reads a file; an empty VALUE removes the field); repeatable")
      ->type_name("KEY=VALUE");
  cmd->add_option("--description", args->description, "The same as --set description=TEXT")->type_name("TEXT");
  cmd->add_option("--license", args->license, "The same as --set license=TEXT (an SPDX name: CC-BY-4.0)")
      ->type_name("TEXT");
  cmd->add_option("--citation", args->citation, "The same as --set citation=TEXT (@FILE reads a BibTeX file)")
      ->type_name("TEXT");
  cmd->add_option("--labels", args->labels,
                  "Class names of an integer label stream, STREAM=FILE with one name per line, line i naming "
                  "label i (STREAM= removes them); repeatable")
      ->type_name("STREAM=FILE");
  cmd->add_option("--vocab", args->vocabs,
                  "Vocabulary of a token stream, STREAM=FILE with one token per line, line i naming token ID i "
                  "(STREAM= removes it); repeatable")
      ->type_name("STREAM=FILE");
  cmd->add_option("--from", args->from,
                  "Replace the card with the card FILE holds (a zrec-card.json, as cat --format tar writes beside its "
                  "shards); the other changes apply after it")
      ->type_name("FILE");
  cmd->add_flag("--remove", args->remove, "Remove the whole card");
  cmd->add_flag("--croissant", args->croissant,
                "Print the card as Croissant 1.0 JSON-LD: every stream with its dtype and shape, class names, every "
                "file with its size and SHA-256 (reads every file)");
  add_json_flag(cmd, args->json, "holding the card");
  return Command{cmd, [args, &global]() { return run_card(*args, global); }};
}

}  // namespace zrec::cli
