// Deterministic random orders for `zrec cat --shuffle` and `--sample`, in memory
// independent of how many records they range over.
//
// KeyedPermutation is a bijection of [0, n) chosen by a 64-bit seed: a balanced
// Feistel network over the smallest power-of-four domain >= n (so at most 4n), with
// cycle-walking (re-applying the network until the value falls below n) to stay in
// [0, n). Expected walks per value are below 4; the state is a few integers, so a
// permutation of a billion positions costs nothing up front. Its output depends only
// on (seed, n, position), never on threads or timing.
//
// sample_index draws position i of an IID-with-replacement sample: a 64-bit hash of
// (seed, i) mapped to [0, n) by multiply-shift (bias below n / 2^64).
#pragma once

#include <cstdint>

namespace zrec::cli {

class KeyedPermutation {
 public:
  KeyedPermutation(uint64_t n, uint64_t seed);
  // The position that comes i-th (i < n); distinct i give distinct results.
  uint64_t at(uint64_t i) const;

 private:
  uint64_t feistel(uint64_t x) const;
  uint64_t n_;
  uint64_t seed_;
  int half_bits_;  // each Feistel half; the domain is 2^(2*half_bits_)
};

uint64_t sample_index(uint64_t seed, uint64_t i, uint64_t n);

}  // namespace zrec::cli
