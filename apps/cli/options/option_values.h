// Small parsing helpers shared by several subcommands.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/codec.h"
#include "zrec/status.h"

namespace zrec::cli {

// "28,28", "(28, 28)", "3" -> dims; "()" and "scalar" -> [] (a scalar record).
// Empty text is an error, so an unset shell variable can't make a scalar store.
// Throws UsageError (cli/usage.h) for text that is not a shape.
std::vector<uint64_t> parse_shape(std::string_view text);

// "raw", "zstd", "zstd_dict" (alias "zstdict"); throws UsageError for anything else.
Codec parse_codec_option(std::string_view text);

// Reads a whole (small) file, e.g. a dictionary; `what` names it in errors.
Result<std::vector<uint8_t>> read_small_file(const std::string& path, const std::string& what,
                                             uint64_t max_bytes = uint64_t{1} << 30);

}  // namespace zrec::cli
