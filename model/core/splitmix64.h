// splitmix64 (Steele, Lea, Flood 2014): the project's one 64-bit mixer, for reproducible streams
// (the random-case generator, regression seeds) and fixed hashes (the DRAM's slow pages). Its
// outputs are pinned in tests/test_random_cases.cpp.
#pragma once

#include <cstdint>

namespace tma {

// One step of splitmix64: advances `state` and returns the next output.
// From state 0 the outputs are 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f, ...
inline uint64_t splitmix64_next(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// splitmix64's output function applied to one value (a stateless 64-bit mix).
inline uint64_t splitmix64_mix(uint64_t x) {
  uint64_t s = x;
  return splitmix64_next(s);
}

}  // namespace tma
