// Test tensors for the gpu tests: random values over many binades mixed with the adversarial
// ones every kernel must get right (NaN, ±Inf, ±0, fp32 denormals, FP8 subnormals, values at and
// around the overflow ties, huge and tiny magnitudes). Seeds derive from the test's name.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string_view>
#include <vector>

#include "sim/cast.hpp"

namespace fp8lab::testing {

inline std::uint64_t seed_from(std::string_view name) {  // FNV-1a
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

// Values a cast or a scale computation can get wrong; every kernel test mixes them in.
inline std::vector<float> adversarial_values() {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {0.0f,
                          -0.0f,
                          inf,
                          -inf,
                          std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          std::bit_cast<float>(0x7F800001u),  // signalling NaN pattern
                          std::numeric_limits<float>::denorm_min(),
                          -std::numeric_limits<float>::denorm_min(),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::max(),
                          -std::numeric_limits<float>::max(),
                          1.0f,
                          -1.0f};
  // Both formats' overflow ties and their neighbours, max finite, and the subnormal boundaries.
  for (const float t : {448.0f, 464.0f, 480.0f, 57344.0f, 61440.0f, 65536.0f}) {
    for (const float s : {1.0f, -1.0f}) {
      v.push_back(s * t);
      v.push_back(s * std::nextafter(t, 0.0f));
      v.push_back(s * std::nextafter(t, inf));
    }
  }
  for (int e = -20; e <= -5; ++e) {  // E4M3 subnormals 2^-9.., E5M2 2^-16.., and ties between
    v.push_back(std::ldexp(1.0f, e));
    v.push_back(std::ldexp(1.5f, e));
    v.push_back(-std::ldexp(1.25f, e));
  }
  return v;
}

// fp32 bit patterns for the host-twin tests: every `stride`-th of all 2^32, plus the `radius`
// patterns on each side of every adversarial value (its ties and overflow boundaries).
inline std::vector<std::uint32_t> stride_and_adversarial_patterns(std::uint64_t stride,
                                                                  std::uint32_t radius) {
  std::vector<std::uint32_t> p;
  for (std::uint64_t b = 0; b < (1ull << 32); b += stride)
    p.push_back(static_cast<std::uint32_t>(b));
  for (const float v : adversarial_values()) {
    const std::uint32_t center = std::bit_cast<std::uint32_t>(v);
    for (std::uint32_t d = 0; d < radius; ++d) {
      p.push_back(center + d);
      p.push_back(center - d);
    }
  }
  return p;
}

// n values: adversarial ones scattered among random ones whose magnitudes span 2^-40 .. 2^40
// (random mantissa and sign), so that every binade of both FP8 formats is hit.
inline std::vector<float> mixed_tensor(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> exponent(-40, 40);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  const std::vector<float> special = adversarial_values();
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (rng() % 16 == 0) {
      x[i] = special[rng() % special.size()];
    } else {
      x[i] = std::ldexp(mantissa(rng), exponent(rng)) * ((rng() & 1) != 0 ? -1.0f : 1.0f);
    }
  }
  return x;
}

// Random normal-ish values in a narrow range (what activations look like), with a few specials.
inline std::vector<float> activation_tensor(std::size_t n, std::uint64_t seed, float stddev) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, stddev);
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng);
  return x;
}

inline std::vector<std::uint16_t> to_bf16_bits(const std::vector<float>& x) {
  std::vector<std::uint16_t> b(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) b[i] = sim::fp32_to_bf16(x[i]);
  return b;
}

}  // namespace fp8lab::testing
