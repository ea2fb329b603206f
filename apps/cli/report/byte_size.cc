// Byte sizes: parsing and formatting (see byte_size.h).
#include "cli/report/byte_size.h"

#include <charconv>
#include <cstdio>
#include <iterator>

#include "cli/options/usage_error.h"

namespace zrec::cli {

Result<uint64_t> parse_byte_size(std::string_view text, const std::string& what) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  std::string_view unit(end, static_cast<size_t>(text.data() + text.size() - end));
  int shift = 0;
  if (!unit.empty() && unit != "B") {
    switch (unit.front()) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        shift = -1;
    }
    unit.remove_prefix(1);
    if (!unit.empty() && unit != "B" && unit != "i" && unit != "iB") shift = -1;
  }
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && shift > 0 && value > (UINT64_MAX >> shift)))
    throw UsageError(what + " '" + std::string(text) + "' is too large (at most 2^64 - 1 bytes)");
  if (ec != std::errc() || end == text.data() || shift < 0)
    throw UsageError("invalid " + what + " '" + std::string(text) +
                     "' (bytes, or with K, M, G or T, powers of 1024: 4096, 64K, 1GiB)");
  return value << shift;
}

std::string format_bytes(double bytes, ByteUnit unit) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  size_t u = 0;
  if (unit == ByteUnit::kMiB) {
    bytes /= 1024.0 * 1024.0;
    u = 2;
  } else {
    while (bytes >= 1024 && u + 1 < std::size(units)) {
      bytes /= 1024;
      ++u;
    }
  }
  char buf[48];
  if (u == 0) std::snprintf(buf, sizeof buf, "%.0f B", bytes);
  else std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

std::string format_mib(uint64_t bytes) { return format_bytes(static_cast<double>(bytes), ByteUnit::kMiB); }

std::string format_bytes_exact(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  return format_bytes(static_cast<double>(bytes)) + " (" + std::to_string(bytes) + " bytes)";
}

}  // namespace zrec::cli
