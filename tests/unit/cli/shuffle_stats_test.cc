// Tests for apps/cli/formats/shuffle (keyed permutation, IID sampling) and
// apps/cli/report/record_stats (bounded-memory percentiles).
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include "cli/formats/shuffle.h"
#include "cli/report/record_stats.h"

namespace zrec::cli {

TEST_CASE("KeyedPermutation is a bijection of 0..n-1 for every small n") {
  for (uint64_t n = 0; n <= 700; ++n) {
    const KeyedPermutation p(n, 12345 + n);
    std::vector<bool> hit(n, false);
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = p.at(i);
      REQUIRE(v < n);
      REQUIRE(!hit[v]);
      hit[v] = true;
    }
  }
}

TEST_CASE("KeyedPermutation: seeds give different orders, the same seed the same one") {
  const uint64_t n = 100000;
  const KeyedPermutation a(n, 1), b(n, 1), c(n, 2);
  uint64_t same_ac = 0, fixed = 0;
  for (uint64_t i = 0; i < n; ++i) {
    CHECK(a.at(i) == b.at(i));
    same_ac += a.at(i) == c.at(i);
    fixed += a.at(i) == i;
  }
  // A random permutation agrees with another (or with identity) in about 1 place.
  CHECK(same_ac < 20);
  CHECK(fixed < 20);
  // Large domains cost nothing up front and stay in range.
  const KeyedPermutation big(uint64_t{1} << 40 | 12345, 9);
  for (uint64_t i = 0; i < 1000; ++i) CHECK(big.at(i) < (uint64_t{1} << 40 | 12345));
}

TEST_CASE("sample_index stays in range and is deterministic") {
  for (uint64_t n : {uint64_t{1}, uint64_t{7}, uint64_t{1000}, uint64_t{1} << 50}) {
    for (uint64_t i = 0; i < 1000; ++i) {
      CHECK(sample_index(3, i, n) < n);
      CHECK(sample_index(3, i, n) == sample_index(3, i, n));
    }
  }
}

TEST_CASE("SizeStats: nearest-rank percentiles, exact below 2048, within 0.1% above") {
  std::mt19937_64 rng(5);
  for (uint64_t scale : {uint64_t{100}, uint64_t{2047}, uint64_t{1} << 20, uint64_t{1} << 31}) {
    SizeStats s;
    std::vector<uint64_t> v;
    for (int k = 0; k < 5001; ++k) {
      const uint64_t x = 1 + rng() % scale;
      v.push_back(x);
      s.add(x);
    }
    std::sort(v.begin(), v.end());
    CHECK(s.min() == v.front());
    CHECK(s.max() == v.back());
    for (double p : {50.0, 99.0, 100.0}) {
      const uint64_t rank = static_cast<uint64_t>(std::ceil(p / 100.0 * double(v.size())));
      const uint64_t want = v[rank - 1];
      const uint64_t got = s.percentile(p);
      if (want < 2048) {
        CHECK(got == want);
      } else {
        CHECK(got <= want);
        CHECK(double(want - got) <= double(want) / 1024.0);
      }
    }
  }
  SizeStats empty;
  CHECK(empty.percentile(50) == 0);
  CHECK(empty.min() == 0);
  SizeStats hundred;
  for (uint64_t x = 1; x <= 100; ++x) hundred.add(x);
  CHECK(hundred.percentile(99) == 99);  // rank ceil(0.99 * 100) = 99, not 100
  CHECK(hundred.percentile(50) == 50);
}

TEST_CASE("SizeStats::histogram: equal bins over [min, max] that count every value") {
  SizeStats s;
  for (uint64_t v : {10, 10, 11, 15, 19, 70}) s.add(v);
  CHECK(s.histogram_bin_width(6) == 11);  // ceil(61 / 6)
  CHECK(s.histogram(6) == std::vector<uint64_t>{5, 0, 0, 0, 0, 1});
  CHECK(s.histogram(100) == [] {
    std::vector<uint64_t> h(61, 0);
    h[0] = 2, h[1] = 1, h[5] = 1, h[9] = 1, h[60] = 1;
    return h;
  }());
  SizeStats big;  // above 2048 a value counts at its bucket's floor, never below min
  for (uint64_t v = 0; v < 1000; ++v) big.add((uint64_t{1} << 30) + v * 4096);
  const std::vector<uint64_t> h = big.histogram(60);
  uint64_t total = 0;
  for (uint64_t c : h) total += c;
  CHECK((total == 1000 && h.size() <= 60));
  CHECK(SizeStats().histogram(10).empty());
}

TEST_CASE("SizeStats::drawn_histogram: equal bins, or log bins for heavy-tailed sizes") {
  SizeStats narrow;  // 10..70: less than 64x apart, equal-width bins ending at max + 1
  for (uint64_t v : {10, 10, 11, 15, 19, 70}) narrow.add(v);
  const SizeStats::Drawn n = narrow.drawn_histogram(6);
  CHECK(!n.log);
  CHECK(n.counts == narrow.histogram(6));
  CHECK(n.edges == std::vector<uint64_t>{10, 21, 32, 43, 54, 65, 71});
  SizeStats wide;  // 1 .. 10^6: one record per power of ten
  for (uint64_t v = 1; v <= 1000000; v *= 10) wide.add(v);
  const SizeStats::Drawn w = wide.drawn_histogram(12);
  CHECK(w.log);
  CHECK(w.edges.front() == 1);
  CHECK(w.edges.back() == 1000001);
  CHECK(w.edges.size() == w.counts.size() + 1);
  CHECK(std::is_sorted(w.edges.begin(), w.edges.end()));
  CHECK(std::adjacent_find(w.edges.begin(), w.edges.end()) == w.edges.end());
  uint64_t total = 0, nonempty = 0;
  for (uint64_t c : w.counts) total += c, nonempty += c != 0;
  CHECK(total == 7);
  CHECK(nonempty == 7);  // each power of ten in a bin of its own (equal-width bins: 6 in the first)
  CHECK(SizeStats().drawn_histogram(10).counts.empty());
}

}  // namespace zrec::cli
