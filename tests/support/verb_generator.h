// Seeded sequences of run-time verbs over the model of verb_model.h: the same seed and length
// give the same sequence on every machine (its own SplitMix64, no <random> distribution, whose
// results the standard leaves to each library). Mostly verbs the model's state accepts, weighted
// towards the ones that move the guest (save is followed by restore, most of the time); about one
// step in eight a verb the state refuses, after which the runner checks the guest is exactly as it
// was. A sequence ends early at destroy.
#pragma once

#include <cstdint>

#include "support/verb_model.h"

namespace qlaunch::testing::seq {

// SplitMix64 (Steele, Lea, Flood 2014): small, fast, fully specified.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform in [0, n) for n >= 1 (n is small here; the modulo's bias is below 2^-50).
  uint64_t Below(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

// The sequence of `seed`: between max_len / 2 (at least 1) and max_len steps.
Sequence Generate(uint64_t seed, size_t max_len, const Limits& limits = {});

// The seed of the i-th sequence of a run started with `seed` (a soak's sequence i is reproduced
// alone by Generate(SequenceSeed(seed, i), ...)).
uint64_t SequenceSeed(uint64_t run_seed, uint64_t index);

}  // namespace qlaunch::testing::seq
