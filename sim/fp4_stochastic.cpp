// E2M1 stochastic rounding (fp4_stochastic.hpp).
#include "sim/fp4_stochastic.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/cast.hpp"
#include "sim/format.hpp"
#include "sim/fp4_stochastic_lanes.hpp"
#include "sim/rng.hpp"

namespace fp8lab::sim {

namespace {

float e2m1_step(float magnitude) {
  if (magnitude < 2.0f) return 0.5f;
  return magnitude < 4.0f ? 1.0f : 2.0f;
}

}  // namespace

std::uint8_t e2m1_stochastic_code(float x, std::uint8_t random_byte) {
  constexpr float kMax = 6.0f;
  if (std::isnan(x)) return static_cast<std::uint8_t>(kE2M1Spec.max_finite_code());
  const float magnitude = std::fabs(x);
  float q = kMax;
  if (magnitude < kMax) {
    // fp32 as the fallback computes it: u * step is exact (a multiple of 2^-9); the add may round
    // (|x| with bits below its ulp at t), which moves no threshold by more than one ulp.
    const float u = static_cast<float>(random_byte) / 256.0f;
    const float t = magnitude + u * e2m1_step(magnitude);
    const float step = e2m1_step(t);
    q = std::fmin(std::floor(t / step) * step, kMax);
  }
  // q is an E2M1 value: its round-to-nearest cast is itself, with x's sign.
  return cast_fp32_to_subbyte(std::signbit(x) ? -q : q, Format::E2M1, kSubbyteCuda);
}

std::uint8_t e2m1_stochastic_byte(std::uint64_t seed, std::uint64_t stream, std::uint64_t index) {
  return static_cast<std::uint8_t>(philox_random_word(seed, stream, index / 4) >>
                                   (8 * (index % 4)));
}

namespace {

void check_sizes(std::span<const float> x, std::span<std::uint8_t> codes) {
  if (x.size() != codes.size()) {
    throw std::invalid_argument("e2m1_stochastic_codes: x has " + std::to_string(x.size()) +
                                " values but codes " + std::to_string(codes.size()));
  }
}

}  // namespace

void e2m1_stochastic_codes(std::span<const float> x, std::uint64_t seed, std::uint64_t stream,
                           std::uint64_t first_index, std::span<std::uint8_t> codes) {
  check_sizes(x, codes);
  fp4_detail::e2m1_stochastic_lanes(x.data(), x.size(), seed, stream, first_index, codes.data());
}

void reference::e2m1_stochastic_codes(std::span<const float> x, std::uint64_t seed,
                                      std::uint64_t stream, std::uint64_t first_index,
                                      std::span<std::uint8_t> codes) {
  check_sizes(x, codes);
  for (std::size_t i = 0; i < x.size(); ++i) {
    codes[i] = e2m1_stochastic_code(x[i], e2m1_stochastic_byte(seed, stream, first_index + i));
  }
}

}  // namespace fp8lab::sim
