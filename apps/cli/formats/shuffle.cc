// Feistel permutation and IID sampling (see shuffle.h).
#include "cli/formats/shuffle.h"

#include <bit>

#include "zrec_support/splitmix64.h"

namespace zrec::cli {

namespace {
constexpr int kRounds = 6;

// SplitMix64's step: a fast, well-mixed 64-bit hash.
constexpr uint64_t mix(uint64_t x) { return splitmix64_mix(x); }
}  // namespace

KeyedPermutation::KeyedPermutation(uint64_t n, uint64_t seed) : n_(n), seed_(mix(seed)) {
  // Smallest even bit count b with 2^b >= n (at least 2: halves of one bit each).
  const int bits = n <= 1 ? 0 : 64 - std::countl_zero(n - 1);
  half_bits_ = bits <= 2 ? 1 : (bits + 1) / 2;
}

uint64_t KeyedPermutation::feistel(uint64_t x) const {
  const uint64_t mask = (uint64_t{1} << half_bits_) - 1;
  uint64_t left = x >> half_bits_, right = x & mask;
  for (int round = 0; round < kRounds; ++round) {
    const uint64_t f = mix(seed_ ^ mix(right ^ (uint64_t(round) << 58))) & mask;
    const uint64_t next = left ^ f;
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

uint64_t KeyedPermutation::at(uint64_t i) const {
  // Cycle-walking: the network permutes [0, 2^(2h)); following it from i until the
  // value is < n permutes [0, n) (each cycle of the big permutation is walked in order).
  uint64_t x = feistel(i);
  while (x >= n_) x = feistel(x);
  return x;
}

uint64_t sample_index(uint64_t seed, uint64_t i, uint64_t n) {
  const uint64_t h = mix(mix(seed) ^ mix(i + 0x632be59bd9b4e019ULL));
  return static_cast<uint64_t>((static_cast<unsigned __int128>(h) * n) >> 64);
}

}  // namespace zrec::cli
