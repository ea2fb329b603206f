// The dictionary trainer's deterministic sample choice (dict_trainer.cc), declared here
// so tests can check its properties without it being part of the public API.
#pragma once

#include <cstdint>
#include <vector>

namespace zrec::store {

// Up to `count` distinct indices in [0, population), in a uniformly random order fixed
// by `seed` (the same on every platform: a fully specified generator, no std:: distributions).
std::vector<uint64_t> sample_indices(uint64_t population, uint64_t count, uint64_t seed);

}  // namespace zrec::store
