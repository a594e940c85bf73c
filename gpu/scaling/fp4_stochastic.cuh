// The per-element code of NVFP4's stochastic rounding of gradients (gpu/scaling/fp4_stochastic.hpp),
// shared by the kernel (fp4_stochastic.cu) and its host twin (fp4_stochastic_host_twin.cu):
//
//   e2m1_stochastic_code(x, byte)          must equal sim::e2m1_stochastic_code(x, byte)
//   nvfp4_stochastic_word                  four elements of sim::scaling::quantize_nvfp4's
//                                           round_stochastically (kTe, one Philox word)
//
// The rule, as sim/fp4_stochastic.hpp describes it (TE's software fallback for
// cvt.rs.satfinite.e2m1x4.f32): with u = byte / 256 and step(v) = 0.5 below 2, 1 below 4, else 2,
// t = |x| + u * step(|x|), q = min(floor(t / step(t)) * step(t), 6), x's sign kept; |x| >= 6 and
// Inf give 6, NaN gives +6. Every fp32 operation is one correctly rounded mul_rn / add_rn / div_rn
// (gpu/cast.cuh): u * step and t / step are exact (powers of two), the add rounds as sim's does.
#pragma once

#include <cmath>
#include <cstdint>

#include "gpu/cast.cuh"
#include "gpu/scaling/fp4_rules.cuh"  // nvfp4_block_multiplier, Nvfp4Global
#include "gpu/subbyte.cuh"
#include "sim/rng.hpp"  // philox_random_word (header-only, host and device)

namespace fp8lab::gpu::scaling {

FP8LAB_HD inline float e2m1_stochastic_step(float magnitude) {
  if (magnitude < 2.0f) return 0.5f;
  return magnitude < 4.0f ? 1.0f : 2.0f;
}

FP8LAB_HD inline std::uint8_t e2m1_stochastic_code(float x, std::uint8_t random_byte) {
  constexpr float kMax = 6.0f;
  if (std::isnan(x)) return static_cast<std::uint8_t>(Subbyte<Format::E2M1>::kMaxCode);
  const float magnitude = std::fabs(x);
  float q = kMax;
  if (magnitude < kMax) {
    const float u = div_rn(static_cast<float>(random_byte), 256.0f);  // exact
    const float t = add_rn(magnitude, mul_rn(u, e2m1_stochastic_step(magnitude)));
    const float step = e2m1_stochastic_step(t);
    q = std::fmin(mul_rn(std::floor(div_rn(t, step)), step), kMax);
  }
  // q is an E2M1 value: its round-to-nearest cast is itself, with x's sign.
  return cast_subbyte<Format::E2M1>(std::signbit(x) ? -q : q, sim::kSubbyteCuda);
}

// Re-rounds the (up to) four elements 4w .. 4w + 3 of x [rows, cols] (row-major) stochastically
// under the block multipliers that the RN pass chose: its E4M3 scale bytes and global decode
// scale, through TE's multiplier (nvfp4_block_multiplier). Element i takes byte i % 4 of the Philox
// word of i / 4: sim::e2m1_stochastic_byte's stream, one word drawn for the four.
FP8LAB_HD inline void nvfp4_stochastic_word(const float* x, std::int64_t rows, std::int64_t cols,
                                            std::int64_t br, std::int64_t bc, std::int64_t w,
                                            std::uint64_t seed, std::uint64_t stream,
                                            const Nvfp4Global& g, const std::uint8_t* scale_bytes,
                                            std::uint8_t* codes) {
  const std::uint32_t word = sim::philox_random_word(seed, stream, static_cast<std::uint64_t>(w));
  const std::int64_t scale_cols = (cols + bc - 1) / bc, n = rows * cols;
  for (int k = 0; k < 4 && 4 * w + k < n; ++k) {
    const std::int64_t i = 4 * w + k, r = i / cols, c = i % cols;
    const float m =
        nvfp4_block_multiplier(scale_bytes[(r / br) * scale_cols + c / bc], g, Nvfp4Mode::kTe);
    codes[i] = e2m1_stochastic_code(mul_rn(x[i], m), static_cast<std::uint8_t>(word >> (8 * k)));
  }
}

}  // namespace fp8lab::gpu::scaling
