// Seeded uniform inputs of the sim tests. A test that draws more from the same generator after
// these (subnormals, signs) passes its own, so that its later draws keep their values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace fp8lab::testing {

// n values uniform in [lo, hi), drawn in order from `gen`.
inline std::vector<float> uniform_floats(std::size_t n, float lo, float hi, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> x(n);
  for (float& v : x) v = dist(gen);
  return x;
}

inline std::vector<float> uniform_floats(std::size_t n, float lo, float hi, std::uint32_t seed) {
  std::mt19937 gen(seed);
  return uniform_floats(n, lo, hi, gen);
}

}  // namespace fp8lab::testing
