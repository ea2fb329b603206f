// Byte counts as people type and read them, in one place for every command: --size
// (train-dict, recompress, concat) and --bytes (bench) are parsed here, and every size
// a command prints (progress, summaries, info, bench tables) is formatted here.
//
// Units are binary everywhere: K, M, G and T are 1024, 1024^2, 1024^3 and 1024^4, and
// are printed as KiB, MiB, GiB, TiB (and PiB).
//
// Example:
//   ZREC_ASSIGN_OR_RETURN(uint64_t bytes, parse_byte_size("64K", "--size"));  // 65536
//   format_bytes(65536.0);                  // "64.0 KiB"
//   format_bytes(3 << 20, ByteUnit::kMiB);  // "3.0 MiB"
//   format_mib(3 << 20);                    // "3.0 MiB"
//   format_bytes_exact(1536);               // "1.5 KiB (1536 bytes)"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "zrec/status.h"

namespace zrec::cli {

// "4096", "4096B", "64K", "64k", "64KiB", "256M", "256MiB", "1G", "1GiB", "2T", "2TiB"
// -> bytes. KB, MB, GB and TB (and Ki, Mi, ...) read as the same binary units. `what`
// names the option in errors. Errors (usage): no number, an unknown unit, a value over
// 2^64 - 1 bytes.
Result<uint64_t> parse_byte_size(std::string_view text, const std::string& what);

enum class ByteUnit {
  kAuto,  // the largest unit the value reaches, B to PiB
  kMiB,   // always MiB: columns whose rows are compared
};

// "512 B" (whole bytes, no decimal) or "12.3 MiB" (one decimal). Negative or
// non-finite values are the caller's error.
std::string format_bytes(double bytes, ByteUnit unit = ByteUnit::kAuto);

// format_bytes(bytes, ByteUnit::kMiB) of a count: "3.0 MiB".
std::string format_mib(uint64_t bytes);

// format_bytes with the exact count after it, "1.5 KiB (1536 bytes)"; below 1 KiB
// just "512 B".
std::string format_bytes_exact(uint64_t bytes);

}  // namespace zrec::cli
