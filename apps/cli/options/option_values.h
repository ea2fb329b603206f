// Small parsing helpers shared by several subcommands.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/format.h"
#include "zrec/status.h"

namespace zrec::cli {

// "28,28", "(28, 28)", "3" -> dims; "()" and "scalar" -> [] (a scalar record).
// Empty text is an error, so an unset shell variable can't make a scalar store.
// Throws UsageError (cli/options/usage_error.h) for text that is not a shape.
std::vector<uint64_t> parse_shape(std::string_view text);

// "raw", "zstd", "zstd_dict" (alias "zstdict"); throws UsageError for anything else.
Codec parse_codec_option(std::string_view text);

// A dictionary larger than this gets a warning (read_dictionary_file): zstd's trainer
// makes 110 KiB ones, and a store holds its dictionary twice in every process that
// opens it (the bytes, and zstd's decoding copy of them).
constexpr uint64_t kLargeDictBytes = uint64_t{4} << 20;

// The dictionary file that `option` (--dict, --stream-dict) names: a side file
// (cli/os/side_file.h: a FIFO or a device is refused at once), at most 1 GiB. One
// larger than kLargeDictBytes is read with a warning that says what it costs.
Result<std::vector<uint8_t>> read_dictionary_file(const std::string& path, const std::string& option);

}  // namespace zrec::cli
