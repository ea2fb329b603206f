// Tests for support/include/zrec_support/splitmix64.h, the one generator of the core (dictionary
// sampling), the benchmark (corpora, id streams) and the CLI (shuffle, sample): its
// stream is pinned to the reference values, so a seed means the same thing everywhere.
#include "zrec_support/splitmix64.h"

#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

namespace zrec {
namespace {

TEST_SUITE("splitmix64") {
  TEST_CASE("the stream of seed 0 is the reference SplitMix64's") {
    SplitMix64 rng(0);
    CHECK(rng.next() == 0xE220A8397B1DCDAFull);
    CHECK(rng.next() == 0x6E789E6AA1B965F4ull);
    CHECK(rng.next() == 0x06C45D188009454Full);
    CHECK(splitmix64_mix(0) == 0xE220A8397B1DCDAFull);
  }

  TEST_CASE("next() is splitmix64_mix of the advancing state - a copy forks the stream") {
    SplitMix64 a(12345);
    uint64_t state = 12345;
    for (int k = 0; k < 100; ++k) {
      CHECK(a.next() == splitmix64_mix(state));
      state += 0x9E3779B97F4A7C15ull;
    }
    SplitMix64 b = a;
    CHECK(a.next() == b.next());
  }

  TEST_CASE("below() stays in range and, for small bounds, is the plain multiply-shift") {
    // The benchmark's corpora were drawn with multiply-shift without rejection; the
    // rejection step changes a draw with probability bound / 2^64, so never here.
    SplitMix64 a(7), b(7);
    std::vector<uint64_t> counts(10);
    for (int k = 0; k < 100000; ++k) {
      const uint64_t plain = static_cast<uint64_t>((static_cast<unsigned __int128>(b.next()) * 10) >> 64);
      const uint64_t v = a.below(10);
      REQUIRE(v == plain);
      ++counts[v];
    }
    for (uint64_t c : counts) CHECK((c > 9500 && c < 10500));
    SplitMix64 one(1);
    for (int k = 0; k < 10; ++k) CHECK(one.below(1) == 0);
    SplitMix64 big(3);
    for (int k = 0; k < 1000; ++k) CHECK(big.below(UINT64_MAX) < UINT64_MAX);
  }

  TEST_CASE("uniform() is at least 0 and below 1") {
    SplitMix64 rng(99);
    double sum = 0;
    for (int k = 0; k < 100000; ++k) {
      const double u = rng.uniform();
      REQUIRE((u >= 0.0 && u < 1.0));
      sum += u;
    }
    CHECK((sum / 100000 > 0.49 && sum / 100000 < 0.51));
  }
}

}  // namespace
}  // namespace zrec
