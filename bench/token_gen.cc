// The token generators: Zipf-distributed ids (vocabulary 32000, exponent 1.1, sampled
// with Walker's alias method) and the long-tailed lengths of variable sequences
// (log-normal, median 90 tokens, sigma 0.9, clamped to 1..8192; mean about 135).
#include <algorithm>
#include <cmath>
#include <mutex>

#include "bench_internal.h"

namespace zrec::bench {

namespace {

constexpr uint32_t kVocabulary = 32000;
constexpr double kZipfExponent = 1.1;

// Walker's alias table over the Zipf weights 1/(rank+1)^s: O(1) per sample.
struct AliasTable {
  std::vector<double> prob;
  std::vector<uint32_t> alias;

  AliasTable() {
    const uint32_t n = kVocabulary;
    std::vector<double> w(n);
    double sum = 0;
    for (uint32_t i = 0; i < n; ++i) sum += w[i] = 1.0 / std::pow(double(i + 1), kZipfExponent);
    for (auto& x : w) x *= n / sum;
    prob.assign(n, 1.0);
    alias.resize(n);
    std::vector<uint32_t> small, large;
    for (uint32_t i = 0; i < n; ++i) (w[i] < 1.0 ? small : large).push_back(i);
    while (!small.empty() && !large.empty()) {
      const uint32_t s = small.back(), l = large.back();
      small.pop_back();
      prob[s] = w[s];
      alias[s] = l;
      w[l] -= 1.0 - w[s];
      if (w[l] < 1.0) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (uint32_t i : large) alias[i] = i;
    for (uint32_t i : small) alias[i] = i;
  }
};

const AliasTable& alias_table() {
  static const AliasTable table;
  return table;
}

}  // namespace

void generate_tokens(uint64_t seed, uint64_t k, size_t count, int32_t* out) {
  const AliasTable& t = alias_table();
  Rng r(derive_seed(seed, 0x70CE, k));
  for (size_t i = 0; i < count; ++i) {
    const uint64_t bits = r.next();
    const uint32_t slot = static_cast<uint32_t>(((bits >> 32) * kVocabulary) >> 32);
    const double u = double(bits & 0xFFFFFFFF) * 0x1.0p-32;
    out[i] = static_cast<int32_t>(u < t.prob[slot] ? slot : t.alias[slot]);
  }
}

uint64_t token_count(uint64_t seed, uint64_t k) {
  Rng r(derive_seed(seed, 0x1E46, k));
  // Box-Muller: one standard normal.
  const double u1 = 1.0 - r.uniform(), u2 = r.uniform();
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  const double len = std::exp(std::log(90.0) + 0.9 * z);
  return static_cast<uint64_t>(std::clamp(std::llround(len), 1ll, 8192ll));
}

}  // namespace zrec::bench
