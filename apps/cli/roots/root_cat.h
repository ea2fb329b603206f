// `zrec cat ROOT`: a root's samples as JSON lines, one object per sample whose keys are
// the committed streams' names and whose values are that sample's records, each as
// `cat --format jsonl` renders a record of its stream.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "zrec/schema.h"
#include "zrec/status.h"

#include "cli/formats/dataset_card.h"
#include "cli/os/output_guard.h"
#include "cli/report/console.h"
#include "cli/roots/root_reader.h"

namespace zrec::cli {

// How a record of bytes that is no text shows to a person on a terminal: "<PNG image,
// 23456 bytes>" (the kind named by its signature) or "<binary data, N bytes>"; empty
// for text.
std::string binary_words(std::span<const uint8_t> bytes);

struct RootCatOptions {
  uint64_t total = 0;                       // samples to write
  std::function<uint64_t(uint64_t)> id_at;  // the sample written at position i
  bool bytes_as_numbers = false;            // Ragged 1-D '|u1' records as numbers
  bool summarise = false;                   // a terminal: large records summarised, bytes named
  bool with_ids = false;                    // {"id": ID, "sample": {...}}
  uint64_t window_bytes = 0;
  // The root's card (zrec card): a stream it names labels of gets a key "STREAM:name"
  // after its own (the class name; an array of them for an array of labels), one it
  // names a vocabulary of a key "STREAM:tokens" (the tokens). ':' is in no stream name,
  // so these keys never meet a stream's.
  std::optional<DatasetCard> card;
};

// Writes the samples to `out`, a chunk of samples at a time (every stream's records of
// the chunk rendered, then the chunk's lines).
Status cat_root_jsonl(OpenedRoot& root, const RootCatOptions& options, Output& out);

}  // namespace zrec::cli
