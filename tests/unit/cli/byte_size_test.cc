// Tests for apps/cli/report/byte_size: the one parser of byte sizes (--size, --bytes) and the
// one formatter of sizes in reports.
#include "cli/report/byte_size.h"

#include <string>

#include <doctest/doctest.h>

#include "cli/options/usage_error.h"
#include "testutil.h"

namespace zrec::cli {
namespace {

uint64_t parsed(const std::string& text) {
  Result<uint64_t> r = parse_byte_size(text, "--size");
  REQUIRE_MESSAGE(r.is_ok(), r.status().message());
  return r.value();
}

// A bad size is a usage error: thrown, for run_cli to report with exit code 2.
std::string parse_error(const std::string& text) {
  try {
    (void)parse_byte_size(text, "--bytes");
  } catch (const UsageError& e) {
    return e.what();
  }
  FAIL("no usage error for '" << text << "'");
  return "";
}

TEST_SUITE("byte_size") {
  TEST_CASE("parse: plain bytes and binary units, every spelling either parser took") {
    CHECK(parsed("0") == 0);
    CHECK(parsed("112640") == 112640);
    CHECK(parsed("4096B") == 4096);
    for (const char* k : {"64K", "64k", "64KiB", "64KB", "64Ki", "64kB"}) CHECK(parsed(k) == 64 * 1024);
    for (const char* m : {"256M", "256MiB", "256MB", "256Mi"}) CHECK(parsed(m) == uint64_t{256} << 20);
    for (const char* g : {"1G", "1GiB", "1GB"}) CHECK(parsed(g) == uint64_t{1} << 30);
    for (const char* t : {"2T", "2TiB", "2TB"}) CHECK(parsed(t) == uint64_t{2} << 40);
    CHECK(parsed("16777215T") == (uint64_t{16777215} << 40));  // the largest T count
    CHECK(parsed("18446744073709551615") == UINT64_MAX);
  }

  TEST_CASE("parse: errors name the option and the text") {
    const std::string want_tail = "' (bytes, or with K, M, G or T, powers of 1024: 4096, 64K, 1GiB)";
    CHECK(parse_error("12X") == "invalid --bytes '12X" + want_tail);
    for (const char* bad : {"", "M", "-1", "1.5M", "1 M", "1m", "1iB", "1Mx", "1MiBB", "0x10"})
      CHECK(parse_error(bad) == "invalid --bytes '" + std::string(bad) + want_tail);
    CHECK(parse_error("16777216T") == "--bytes '16777216T' is too large (at most 2^64 - 1 bytes)");
    CHECK(parse_error("18446744073709551616") ==
          "--bytes '18446744073709551616' is too large (at most 2^64 - 1 bytes)");
  }

  TEST_CASE("format: the largest unit reached, one decimal - bytes whole") {
    CHECK(format_bytes(0) == "0 B");
    CHECK(format_bytes(1023) == "1023 B");
    CHECK(format_bytes(1024) == "1.0 KiB");
    CHECK(format_bytes(1536) == "1.5 KiB");
    CHECK(format_bytes(12.34 * 1024 * 1024) == "12.3 MiB");
    CHECK(format_bytes(double(uint64_t{3} << 30)) == "3.0 GiB");
    CHECK(format_bytes(double(uint64_t{5} << 40)) == "5.0 TiB");
    CHECK(format_bytes(double(uint64_t{2048} << 50)) == "2048.0 PiB");  // PiB is the largest unit
    CHECK(format_bytes(1234.0 * 1024 * 1024 / 2.5) == "493.6 MiB");     // rates: fractional bytes
  }

  TEST_CASE("format: fixed MiB, and the exact count for zrec info") {
    CHECK(format_bytes(0, ByteUnit::kMiB) == "0.0 MiB");
    CHECK(format_bytes(52428, ByteUnit::kMiB) == "0.0 MiB");
    CHECK(format_bytes(double(uint64_t{3} << 30), ByteUnit::kMiB) == "3072.0 MiB");
    CHECK(format_bytes_exact(0) == "0 B");
    CHECK(format_bytes_exact(1023) == "1023 B");
    CHECK(format_bytes_exact(1536) == "1.5 KiB (1536 bytes)");
    CHECK(format_bytes_exact(uint64_t{7} << 30) == "7.0 GiB (7516192768 bytes)");
  }
}

}  // namespace
}  // namespace zrec::cli
