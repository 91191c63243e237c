// The constrained-random generator's own pseudo-random numbers: splitmix64 and integer-only helpers,
// so that a (seed, index) pair gives the same case with any compiler, standard library or machine.
// Nothing here uses <random>'s distributions (their output is not specified by the standard) or
// floating point.
#pragma once

#include <cstdint>
#include <vector>

#include "tma/core/splitmix64.h"

namespace tma {

// The stream of case `index` of run `seed`: keyed by both, independent of every other case.
class RandomStream {
 public:
  RandomStream(uint64_t seed, uint64_t index)
      : state_(splitmix64_mix(splitmix64_mix(seed) ^ splitmix64_mix(~index))) {}

  uint64_t next() { return splitmix64_next(state_); }

  // Uniform in [0, n) (0 when n is 0): rejection of the biased low end, then the remainder.
  uint64_t below(uint64_t n) {
    if (n <= 1) return 0;
    const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    for (;;) {
      const uint64_t r = next();
      if (r >= threshold) return r % n;
    }
  }

  // Uniform in [lo, hi], both included (lo when hi < lo).
  int64_t range(int64_t lo, int64_t hi) {
    if (hi <= lo) return lo;
    const uint64_t n = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;  // 0: all 2^64 values
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + (n ? below(n) : next()));
  }

  // True with probability percent / 100.
  bool chance(uint32_t percent) { return below(100) < percent; }

  template <typename T>
  T pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(below(v.size()))];
  }

  // Index i with probability weights[i] / sum(weights).
  size_t weighted(const std::vector<uint32_t>& weights) {
    uint64_t total = 0;
    for (uint32_t w : weights) total += w;
    uint64_t r = below(total);
    for (size_t i = 0; i < weights.size(); ++i) {
      if (r < weights[i]) return i;
      r -= weights[i];
    }
    return weights.size() - 1;
  }

 private:
  uint64_t state_;
};

}  // namespace tma
