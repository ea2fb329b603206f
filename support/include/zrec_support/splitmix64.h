// SplitMix64 (Steele, Lea, Flood 2014), the random generator behind everything the
// library and its tools draw from a seed: the dictionary trainer's record sample
// (train_dictionary's TrainOptions::seed), the benchmark's synthetic corpora, and the
// CLI's `cat --shuffle` / `--sample` orders. It is tiny, well mixed and specified to
// the bit, so a seed gives the same stream with every compiler and standard library
// (std:: distributions do not).
//
//   zrec::SplitMix64 rng(seed);
//   uint64_t pick = rng.below(population);   // uniform in [0, population)
//   double u = rng.uniform();                // uniform in [0, 1)
//   uint64_t h = zrec::splitmix64_mix(key);  // a well-mixed 64-bit hash of key
//
// No function here fails or allocates; the generator is a value (copy it to fork the
// stream) and is not thread-safe (one per thread).
#pragma once

#include <cstdint>

namespace zrec {

// SplitMix64's step: x advanced by the golden-ratio increment, then its output
// function. SplitMix64(x).next() == splitmix64_mix(x); a bijection of 64-bit values,
// so also a good hash of an integer key.
inline constexpr uint64_t splitmix64_mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

class SplitMix64 {
 public:
  explicit constexpr SplitMix64(uint64_t seed) : state_(seed) {}

  // The next 64 random bits.
  constexpr uint64_t next() {
    const uint64_t out = splitmix64_mix(state_);
    state_ += 0x9E3779B97F4A7C15ull;
    return out;
  }

  // Uniform in [0, bound), exactly: Lemire's multiply-shift with rejection (a draw is
  // rejected with probability below bound / 2^64). bound must be >= 1.
  constexpr uint64_t below(uint64_t bound) {
    for (;;) {
      const unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
      const auto low = static_cast<uint64_t>(m);
      if (low >= bound || low >= (-bound) % bound) return static_cast<uint64_t>(m >> 64);
    }
  }

  // Uniform in [0, 1), on the 2^53 doubles spaced 2^-53 apart.
  constexpr double uniform() { return double(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace zrec
