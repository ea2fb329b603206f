// append-tar's options: their CLI11 bindings, and what the per-stream ones (--ext,
// --parse, --dense, --stream-dict, --stream-codec) say once parsed, for the streams the
// run opens or makes.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "zrec/format.h"
#include "zrec/status.h"
#include "zrec/store.h"

#include "cli/formats/text_numbers.h"
#include "cli/import/append_session.h"
#include "cli/import/new_store_options.h"
#include "cli/import/npy_member.h"
#include "cli/options/cli11_fwd.h"
#include "cli/options/codec_rules.h"

namespace zrec::cli {

// The command line of append-tar.
struct AppendTarArgs {
  std::string root;
  std::vector<std::string> tars;
  std::vector<std::string> ext;
  std::vector<std::string> parse;
  std::vector<std::string> dense;  // --dense STREAM: a new stream of .npy members is Dense
  bool skip_incomplete = false;
  bool adopt = false;
  std::string keys;
  bool keys_stream = false;                // --keys-stream: the keys as the root's stream __key__
  std::vector<std::string> stream_dicts;   // --stream-dict STREAM=FILE: a new stream's own dictionary
  std::vector<std::string> stream_codecs;  // --stream-codec STREAM=CODEC: a new stream's own codec
  NewStoreArgs create;
  AppendArgs append;
};

// The per-stream options, parsed and checked on their own (the streams they name are
// checked against the root's once it is open).
struct TarStreamOptions {
  std::map<std::string, NumberSyntax> parse;  // --parse: a stream's numbers, by stream
  std::set<std::string> parse_one;            // --parse EXT=int|float: one number per member, a Dense scalar stream
  std::set<std::string> dense;                // --dense: new streams of .npy members made Dense
  std::vector<std::string> ext_streams;       // --ext: the streams selected, in its order
  std::map<std::string, std::string> stream_of_ext;  // --ext: a member's extension -> its stream
  std::map<std::string, std::string> alias_words;    // --ext: a stream of alternatives -> ".png, .jpg or .jpeg"
  CreateOptions create;                              // a new stream's, before the per-stream options
  // --stream-dict: new streams with a dictionary of their own (zstd_dict), by name.
  std::map<std::string, std::vector<uint8_t>> stream_dicts;
  std::map<std::string, std::string> stream_dict_specs;  // by stream: the STREAM=FILE given, for messages
  // --stream-codec: new streams with a codec of their own (or auto), by name, and the
  // STREAM=CODEC given.
  std::map<std::string, NewCodec> stream_codecs;
  std::map<std::string, std::string> stream_codec_specs;
};

// Parses `a`'s per-stream options into `o`. A malformed one is a UsageError; a
// --stream-dict FILE that cannot be read, or a bad --codec, is the returned error.
Status parse_tar_stream_options(const AppendTarArgs& a, TarStreamOptions& o);

// How a new stream `ext` is made: of bytes, of --parse numbers, or (made by its first
// member, `first_array`, when not null) of the array's dtype, Ragged of its ndim or
// (--dense) Dense of its shape; with its own dictionary or codec where the options
// give one.
CreateOptions new_stream_options(const AppendTarArgs& a, const TarStreamOptions& o, const std::string& ext,
                                 const NpyHeader* first_array);

// Registers append-tar's operands and options on `cmd`, bound to `args`.
void add_append_tar_options(CLI::App* cmd, AppendTarArgs& args);

}  // namespace zrec::cli
