// append-tar's options (see tar_options.h).
#include "cli/import/tar_options.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "zrec/dataset.h"
#include "zrec/schema.h"

#include "cli/formats/printable.h"
#include "cli/options/option_values.h"
#include "cli/options/per_stream_value.h"
#include "cli/options/stream_codec_option.h"
#include "cli/options/usage_error.h"

namespace zrec::cli {

namespace {

// --stream-codec STREAM=CODEC, checked as --stream-dict is: one CODEC per STREAM, a
// name that can be a stream's. zstd_dict comes with its dictionary: --stream-dict.
void parse_stream_codec_options(const AppendTarArgs& a, TarStreamOptions& o) {
  StreamCodecs parsed = cli::parse_stream_codecs(a.stream_codecs, [](const std::string& name) {
    return "a zstd_dict stream needs its dictionary: give --stream-dict " + printable(name) + "=FILE";
  });
  for (const auto& [name, codec] : parsed.codecs) {
    const std::string& spec = parsed.specs.at(name);
    if (o.stream_dict_specs.count(name) > 0)
      throw UsageError("--stream-codec '" + printable(spec) + "': the stream '" + printable(name) +
                       "' has a dictionary (--stream-dict '" + printable(o.stream_dict_specs.at(name)) +
                       "'), which makes it zstd_dict");
    if (codec.automatic && a.append.checksum.value_or(false))
      throw UsageError("--stream-codec '" + printable(spec) +
                       "': --checksum sets zstd frame checksums, and codec auto may choose raw (give the stream zstd)");
    if (codec.codec == Codec::kRaw && a.append.checksum.value_or(false))
      throw UsageError("--stream-codec '" + printable(spec) + "': --checksum is for zstd and zstd_dict, not raw");
  }
  o.stream_codecs = std::move(parsed.codecs);
  o.stream_codec_specs = std::move(parsed.specs);
}

}  // namespace

Status parse_tar_stream_options(const AppendTarArgs& a, TarStreamOptions& o) {
  for (const auto& spec : a.parse) {
    const size_t eq = spec.find('=');
    const std::string ext = eq == std::string::npos ? "" : spec.substr(0, eq);
    const std::string how = eq == std::string::npos ? "" : spec.substr(eq + 1);
    if (ext.empty() || (how != "ints" && how != "floats" && how != "int" && how != "float"))
      throw UsageError("--parse '" + spec +
                       "': expected EXT=int or EXT=float (one number per member, e.g. --parse cls=int), or EXT=ints "
                       "or EXT=floats (any count)");
    if (const std::string why = stream_name_problem(ext); !why.empty())
      throw UsageError("--parse '" + spec + "': '" + ext + "' cannot name a stream: " + why + " (" + kStreamNameRule +
                       ")");
    o.parse[ext] = how == "ints" || how == "int" ? NumberSyntax::kInts : NumberSyntax::kFloats;
    if (how == "int" || how == "float") o.parse_one.insert(ext);
    else o.parse_one.erase(ext);
  }
  for (const auto& name : a.dense) {
    if (const std::string why = stream_name_problem(name); !why.empty())
      throw UsageError("--dense '" + printable(name) + "' cannot name a stream: " + why + " (" + kStreamNameRule + ")");
    o.dense.insert(name);
  }
  // --ext: a stream per item; "png;jpg;jpeg=image" (WebDataset's ';' for alternatives)
  // puts members of any of those extensions into the stream "image" ("png;jpg": "png").
  for (const auto& spec : a.ext) {
    const size_t eq = spec.find('=');
    const std::string alternatives = spec.substr(0, eq);
    std::vector<std::string> alts;
    for (size_t at = 0; at <= alternatives.size();) {
      const size_t semi = std::min(alternatives.find(';', at), alternatives.size());
      alts.push_back(alternatives.substr(at, semi - at));
      at = semi + 1;
    }
    const std::string name = eq == std::string::npos ? alts.front() : spec.substr(eq + 1);
    for (const std::string& word : alts)
      if (const std::string why = stream_name_problem(word); !why.empty())
        throw UsageError("--ext '" + spec + "': the extension '" + word + "' cannot name a stream: " + why + " (" +
                         kStreamNameRule + ")");
    if (const std::string why = stream_name_problem(name); !why.empty())
      throw UsageError("--ext '" + spec + "': '" + name + "' cannot name a stream: " + why + " (" + kStreamNameRule +
                       ")");
    if (std::find(o.ext_streams.begin(), o.ext_streams.end(), name) != o.ext_streams.end())
      throw UsageError("--ext '" + spec + "': the stream '" + name + "' is named twice");
    o.ext_streams.push_back(name);
    for (const std::string& word : alts) {
      if (auto it = o.stream_of_ext.find(word); it != o.stream_of_ext.end())
        throw UsageError("--ext '" + spec + "': the extension '" + word + "' already goes to the stream '" +
                         it->second + "'");
      o.stream_of_ext[word] = name;
    }
    if (alts.size() > 1 || alts.front() != name) {
      std::string words;
      for (size_t i = 0; i < alts.size(); ++i)
        words += (i == 0 ? "." : i + 1 == alts.size() ? " or ." : ", .") + alts[i];
      o.alias_words[name] = words;
    }
  }
  ZREC_ASSIGN_OR_RETURN(o.create, new_store_options(a.create, a.append.checksum.value_or(false), a.append.level));
  for (const std::string& spec : a.stream_dicts) {
    const auto [name, file] = split_per_stream_value(
        spec, o.stream_dict_specs,
        {.option = "--stream-dict", .value = "FILE", .example = "txt=txt.dict", .has = "a dictionary"});
    o.stream_dict_specs[name] = spec;
    ZREC_ASSIGN_OR_RETURN(o.stream_dicts[name], read_dictionary_file(file, "--stream-dict"));
  }
  parse_stream_codec_options(a, o);
  return Status::ok();
}

CreateOptions new_stream_options(const AppendTarArgs& a, const TarStreamOptions& o, const std::string& ext,
                                 const NpyHeader* first_array) {
  std::optional<NumberSyntax> parse;
  if (auto it = o.parse.find(ext); it != o.parse.end()) parse = it->second;
  CreateOptions c = o.create;
  c.schema.ndim = 1;
  c.schema.dtype = parse_dtype(!parse ? "|u1" : *parse == NumberSyntax::kInts ? "<i8" : "<f8").value();
  if (o.parse_one.count(ext) > 0) {  // one number per member: a Dense scalar stream
    c.schema.ndim = 0;
    c.schema.item_shape = std::vector<uint64_t>{};
  }
  if (first_array != nullptr && !parse) c.schema = npy_stream_schema(*first_array, o.dense.count(ext) > 0);
  set_new_store_codec(c, a.create, a.append.checksum.value_or(false), a.append.level);
  if (auto own = o.stream_dicts.find(ext); own != o.stream_dicts.end()) {  // --stream-dict
    c.codec = Codec::kZstdDict;
    c.codec_auto = false;
    c.dictionary = own->second;
  } else if (auto codec = o.stream_codecs.find(ext); codec != o.stream_codecs.end()) {  // --stream-codec
    c.codec = codec->second.codec;
    c.codec_auto = codec->second.automatic;
    c.dictionary.clear();
    c.checksum = c.checksum && c.codec != Codec::kRaw;       // never with auto: refused
  } else if (ext == kKeyStream && a.create.codec.empty()) {  // keys are a few bytes: a zstd frame would grow them
    c.codec = Codec::kRaw;
    c.dictionary.clear();
    c.checksum = false;
  }
  return c;
}

void add_append_tar_options(CLI::App* cmd, AppendTarArgs& args) {
  cmd->add_option("root", args.root, "Directory of named streams (created if missing)")->required();
  cmd->add_option("tars", args.tars, "Tar files (plain, gzip, zstd, xz: detected by content); - or none: stdin");
  cmd->add_option("--ext", args.ext,
                  "Extensions to import, e.g. jpg,cls (default: the root's streams, or those "
                  "of the first sample); others are ignored and counted. 'png;jpg=image' puts either "
                  "extension into the stream image")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--parse", args.parse,
                  "EXT=int or EXT=float: the member's text holds one number (a new stream is a Dense scalar "
                  "'<i8' or '<f8', e.g. class labels); EXT=ints or EXT=floats: any count of numbers (a new stream is "
                  "Ragged ndim 1 '<i8' or '<f8')")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_option("--dense", args.dense,
                  "STREAM of .npy members (KEY.STREAM.npy): a new stream is Dense of the first array's shape, "
                  "every array of that shape (default: Ragged of the first array's ndim; a 0-d array: Dense)")
      ->type_name("STREAM")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_flag("--skip-incomplete", args.skip_incomplete,
                "Skip samples that lack a stream's extension or have an empty member (counted), instead of failing");
  cmd->add_option("--keys", args.keys, "Append each published sample's key to FILE, one line per record");
  cmd->add_flag("--keys-stream", args.keys_stream,
                "Keep each sample's key inside the root, as a record of its stream __key__ (cat --format tar "
                "names members by it; later runs keep writing it)");
  cmd->add_flag("--adopt", args.adopt,
                "ROOT is a directory of stores that append-tar did not build (no zrec-root marker): make them its "
                "streams, if they all hold the same number of records");
  add_new_store_options(cmd, args.create, "New streams");
  cmd->add_option("--stream-dict", args.stream_dicts,
                  "STREAM=FILE: the new stream STREAM gets codec zstd_dict with this dictionary of its own (one per "
                  "stream, as train-dict trains it on that stream), whatever --codec and --dict say for the others")
      ->type_name("STREAM=FILE")
      ->allow_extra_args(false);
  cmd->add_option("--stream-codec", args.stream_codecs,
                  "STREAM=CODEC: the new stream STREAM gets codec raw, zstd or auto (one per stream), whatever "
                  "--codec says for the others (zstd_dict: --stream-dict)")
      ->type_name("STREAM=CODEC")
      ->allow_extra_args(false);
  add_append_options(cmd, args.append, "samples");
}

}  // namespace zrec::cli
