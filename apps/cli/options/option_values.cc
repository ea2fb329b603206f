// Parsing helpers shared by subcommands.
#include "cli/options/option_values.h"

#include <fcntl.h>

#include <charconv>

#include "zrec/file.h"

#include "cli/app/usage.h"
#include "cli/options/option_choices.h"

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

Result<std::vector<uint8_t>> read_small_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_RDONLY));
  ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
  if (size > max_bytes)
    return invalid_argument(what + " '" + path + "' is larger than " + std::to_string(max_bytes) + " bytes");
  std::vector<uint8_t> bytes(size);
  ZREC_RETURN_IF_ERROR(f.pread_exact(bytes.data(), bytes.size(), 0));
  return bytes;
}

}  // namespace zrec::cli
