// Stochastic rounding of fp32 to E2M1 for NVFP4 gradients (TE's NVFP4BlockScaling rounds the
// gradient's row- and columnwise copies stochastically unless disable_stochastic_rounding),
// with a counter-based Philox4x32-10 stream (sim/rng.hpp), seeded and reproducible.
//
// The rounding is TE's software fallback for `cvt.rs.satfinite.e2m1x4.f32`
// (transformer_engine/common/util/ptx.cuh; shared/spec/reference/fp4-formats.md §4): with u =
// byte / 256 of one random byte, step(v) = 0.5 below 2, 1 below 4, else 2,
//   t = |x| + u * step(|x|),   q = min(floor(t / step(t)) * step(t), 6),   sign of x kept,
// so |x| rounds up to the next E2M1 value with probability (|x| - lower) / step, quantized to
// 1/256: E[q] = x up to a bias below step / 256 toward zero. |x| >= 6 and Inf give 6; NaN gives
// +6 (0x7), as the hardware's satfinite conversion.
//
// The stream: element i of a tensor takes byte (i % 4) of philox_random_word(seed, stream,
// i / 4), one 32-bit word per 4 elements as the hardware instruction consumes them. TE's own
// stream is not reproduced: its counters follow each kernel's thread layout (its Philox offset
// and subsequence come from torch's CUDA generator and the thread index), so TE-exact SR bits are
// not promised; what is promised is the rounding rule and unbiasedness, which is how TE tests its
// SR too (tests/pytorch/nvfp4/test_nvfp4_sr_quantize.py).
#pragma once

#include <cstdint>
#include <span>

namespace fp8lab::sim {

// The E2M1 code of x rounded stochastically with one random byte (rule above).
std::uint8_t e2m1_stochastic_code(float x, std::uint8_t random_byte);

// The random byte of element `index` (stream above).
std::uint8_t e2m1_stochastic_byte(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

// codes[i] = e2m1_stochastic_code(x[i], e2m1_stochastic_byte(seed, stream, first_index + i)),
// one code a byte (sim/pack.hpp packs them). Throws std::invalid_argument if the sizes differ.
void e2m1_stochastic_codes(std::span<const float> x, std::uint64_t seed, std::uint64_t stream,
                           std::uint64_t first_index, std::span<std::uint8_t> codes);

// e2m1_stochastic_codes runs Highway lanes (fp4_stochastic_lanes.cpp); reference:: is the loop of
// scalar calls above (same contract, same bits), which the tests check the lanes against.
namespace reference {
void e2m1_stochastic_codes(std::span<const float> x, std::uint64_t seed, std::uint64_t stream,
                           std::uint64_t first_index, std::span<std::uint8_t> codes);
}  // namespace reference

// The Highway target e2m1_stochastic_codes dispatches to (tests name it in failures).
const char* e2m1_stochastic_target_name();

}  // namespace fp8lab::sim
