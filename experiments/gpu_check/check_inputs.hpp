// Pieces of the checks' inputs that several check files share: the M x N x K of a GEMM case, and
// the IEEE specials that the GEMM and scaling checks scatter into their random operands.
// Header-only: the torch checks compile in a LibTorch TU.
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace fp8lab::experiments::gpu_check {

struct GemmShape {
  std::int64_t m, n, k;
};

// Overwrites `count` elements of x (non-empty) at random places with a value drawn from ±0, ±Inf,
// NaN, the smallest fp32 denormal, `extra1` and `extra2` (each draw: the value's index, then the
// place's).
inline void scatter_specials(std::vector<float>& x, std::mt19937_64& rng, std::size_t count,
                             float extra1, float extra2) {
  const float inf = std::numeric_limits<float>::infinity();
  const float pick[] = {0.0f,
                        -0.0f,
                        inf,
                        -inf,
                        std::numeric_limits<float>::quiet_NaN(),
                        std::numeric_limits<float>::denorm_min(),
                        extra1,
                        extra2};
  for (std::size_t i = 0; i < count; ++i) x[rng() % x.size()] = pick[rng() % std::size(pick)];
}

}  // namespace fp8lab::experiments::gpu_check
