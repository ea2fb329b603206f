// Parsing helpers shared by subcommands.
#include "cli/options/option_values.h"

#include <fcntl.h>

#include <charconv>

#include <spdlog/spdlog.h>

#include "cli/formats/printable.h"
#include "cli/options/option_choices.h"
#include "cli/options/usage_error.h"
#include "cli/os/side_file.h"
#include "cli/report/byte_size.h"
#include "zrec_support/file.h"

namespace zrec::cli {

std::vector<uint64_t> parse_shape(std::string_view text) {
  std::string t;
  for (char c : text)
    if (c != ' ' && c != '(' && c != ')' && c != '[' && c != ']') t += c;
  std::vector<uint64_t> dims;
  if (text.empty()) throw UsageError("empty shape (use --shape scalar or '()' for one value per record)");
  if (t.empty() || t == "scalar") return dims;
  size_t pos = 0;
  while (pos <= t.size()) {
    size_t comma = t.find(',', pos);
    if (comma == std::string::npos) comma = t.size();
    std::string_view item(t.data() + pos, comma - pos);
    if (item.empty()) {
      if (comma == t.size() && !dims.empty()) break;  // trailing comma: "(5,)"
      throw UsageError("invalid shape '" + std::string(text) + "': empty dimension");
    }
    uint64_t d = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (ec != std::errc() || end != item.data() + item.size())
      throw UsageError("invalid shape '" + std::string(text) + "': '" + std::string(item) + "' is not a dimension");
    if (d == 0) throw UsageError("invalid shape '" + std::string(text) + "': dimensions must be >= 1");
    dims.push_back(d);
    pos = comma + 1;
  }
  return dims;
}

Codec parse_codec_option(std::string_view text) {
  auto codec = parse_codec(text);
  if (!codec) throw UsageError("unknown codec '" + std::string(text) + "' (use " + choice_list(codec_names()) + ")");
  return *codec;
}

Result<std::vector<uint8_t>> read_dictionary_file(const std::string& path, const std::string& option) {
  ZREC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, read_side_file(path, option, uint64_t{1} << 30));
  if (bytes.size() > kLargeDictBytes)
    spdlog::warn(
        "{} '{}' holds {}: every process that opens a store with it holds about {} for it (its bytes and zstd's "
        "decoding copy; each DataLoader worker, each reader), more while it compresses; zstd's trainer makes 110 KiB "
        "dictionaries (train-dict --size)",
        option, printable(path), format_mib(bytes.size()), format_mib(2 * bytes.size()));
  return bytes;
}

}  // namespace zrec::cli
