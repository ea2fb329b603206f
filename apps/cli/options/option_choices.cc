// The value tables of options (option_choices.h).
#include "cli/options/option_choices.h"

#include <algorithm>
#include <map>

#include "zrec/dict.h"
#include "zrec/dtype.h"
#include "zrec/format.h"

#include "cli/formats/printable.h"
#include "cli/options/usage_error.h"
#include "zrec_bench.h"

namespace zrec::cli {

const Choices& cat_format_names() {
  static const Choices words = {"npy", "raw", "text", "jsonl", "tar", "npz"};
  return words;
}

const Choices& framing_names() {
  static const Choices words = {"lines", "nul", "u32le", "u64le"};
  return words;
}

const Choices& keep_names() {
  static const Choices words = {"first", "last"};
  return words;
}

const Choices& tar_array_names() {
  static const Choices words = {"npy", "text"};
  return words;
}

const Choices& number_syntax_names() {
  static const Choices words = {"ints", "floats"};
  return words;
}

const Choices& codec_names() {
  static const Choices words = {to_string(Codec::kRaw), to_string(Codec::kZstd), to_string(Codec::kZstdDict)};
  return words;
}

const Choices& new_codec_names() {
  static const Choices words = {to_string(Codec::kRaw), to_string(Codec::kZstd), to_string(Codec::kZstdDict), "auto"};
  return words;
}

const Choices& tier_names() {
  static const Choices words = [] {
    Choices w;
    for (DictTier t : {DictTier::kSmall, DictTier::kBalanced, DictTier::kMax}) w.push_back(dict_tier_preset(t).name);
    return w;
  }();
  return words;
}

const Choices& workload_names() {
  static const Choices words = [] {
    Choices w;
    for (bench::Workload k : bench::kAllWorkloads) w.push_back(bench::to_string(k));
    return w;
  }();
  return words;
}

const Choices& dtype_names() {
  static const Choices words = numpy_dtype_names();
  return words;
}

namespace {
// Options live as long as the process's CLI11 app: a pointer names one.
std::map<const CLI::Option*, const Choices*>& registry() {
  static std::map<const CLI::Option*, const Choices*> r;
  return r;
}
}  // namespace

CLI::Option* offer_choices(CLI::Option* o, const Choices& words) {
  registry()[o] = &words;
  return o;
}

const Choices* choices_of(const CLI::Option* o) {
  const auto it = registry().find(o);
  return it == registry().end() ? nullptr : it->second;
}

std::string choice_list(const Choices& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += i + 1 == words.size() ? " or " : ", ";
    out += words[i];
  }
  return out;
}

size_t choose(const Choices& words, const std::string& option, const std::string& value) {
  const auto it = std::find(words.begin(), words.end(), value);
  if (it == words.end())
    throw UsageError("unknown " + option + " '" + printable(value) + "' (use " + choice_list(words) + ")");
  return static_cast<size_t>(it - words.begin());
}

}  // namespace zrec::cli
