// Croissant 1.0 metadata (MLCommons' JSON-LD vocabulary for ML datasets, what the
// Hugging Face hub and Kaggle export) of a zrec root or store, for `zrec card
// --croissant`: the card's text, one cr:FileObject per file with its size and SHA-256,
// one cr:FileSet per stream, and one record set "samples" whose fields are the streams
// (each with its dtype and shape, and its class names as an enumeration record set
// where the card names them). A reader cannot decode zrecord files from Croissant
// alone (encodingFormat application/x-zrecord): the metadata says what the data is and
// proves which files it is.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "zrec/schema.h"

#include "cli/formats/dataset_card.h"

namespace zrec::cli {

struct CroissantFile {
  std::string path;  // relative to the dataset: "png/data_0.zr", "zrec-root"
  uint64_t bytes = 0;
  std::string sha256_hex;
};

struct CroissantStream {
  std::string name;
  Schema schema;
  std::string data_type;  // schema.org's type of a record: "sc:ImageObject", "sc:Integer", ...
  std::vector<CroissantFile> files;
};

struct CroissantDataset {
  std::string name;  // the card's name, else the directory's
  uint64_t samples = 0;
  DatasetCard card;
  std::vector<CroissantStream> streams;
  std::vector<CroissantFile> other_files;  // the root's marker, the card
};

// The schema.org data type of one record of `schema`, its first record's bytes being
// `first` (a byte stream holding images is sc:ImageObject, one of text sc:Text).
std::string croissant_data_type(const Schema& schema, std::span<const uint8_t> first);

// The JSON-LD document, indented, ending with a newline.
std::string croissant_json(const CroissantDataset& dataset);

}  // namespace zrec::cli
