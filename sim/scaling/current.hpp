// Current (dynamic, per-tensor) scaling: the scale comes from this tensor's amax now.
// Two peers, two rules (docs/numerics.md §2.2):
//   TE Float8CurrentScaling   te-accelerate.md §5.1-5.2  (recipe_common.cuh compute_scale_from_amax)
//   torchao "tensorwise"      torchao-mx.md §2.1-2.3     (float8_utils.py amax_to_scale)
// The TE rule is also block scaling's rule (sim/scaling/block.hpp) and the torchao rule is also
// rowwise scaling's (sim/scaling/rowwise.hpp).
#pragma once

#include <cstdint>
#include <span>

#include "sim/format.hpp"
#include "sim/scaling/common.hpp"

namespace fp8lab::sim::scaling {

// ---- TE -----------------------------------------------------------------------------------------

// TE compute_scale_from_amax(amax, max_fp8, pow2, eps, value_for_inf), te-accelerate.md §5.1.
// Exact order of operations (every step one fp32 operation):
//   1. if (amax < eps) amax = eps                 NaN compares false: untouched
//   2. if (amax is ±Inf, 0 or NaN) return 1.0f
//   3. s = RN(fp8_max / amax)                      __fdiv_rn
//   4. if (s is +Inf) s = value_for_inf
//   5. if (pow2) s = te_round_scale_down_to_power_of_2(s)
float te_scale_from_amax(float amax, float fp8_max, bool pow2, float eps, float value_for_inf);

// TE's power-of-2 rule: keep sign and exponent, clear the mantissa (bits & 0xFF800000), i.e. round
// down to a power of two. FLT_MAX -> 2^127; subnormals -> 0 (exponent field 0).
float te_round_scale_down_to_power_of_2(float scale);

// TE Float8CurrentScaling cast (csrc/quantizer.cpp quantize_impl, §5.2):
//   amax = max |x| (NaN ignored); if `reduce`: amax = MAX over ranks;
//   s = te_scale_from_amax(amax, fp8_max(format), pow2, eps, FLT_MAX);
//   q = cast_satfinite(RN(x * s));  scale_inv = RN(1 / s)  (__frcp_rn)
// `pow2` is TE's NVTE_FP8_CURRENT_SCALING_POWER_2_SCALES, `eps` its amax_epsilon (default 0).
// `threads` (>= 1; no bit depends on it): the amax and the cast split x into chunks of
// kPerTensorChunk elements on the GEMMs' worker pool (a max and counts merge in any order).
QuantizeResult quantize_current_te(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                   Format format, bool pow2 = false, float eps = 0.0f,
                                   const AmaxReducer& reduce = {}, int threads = 1);

// ---- torchao ------------------------------------------------------------------------------------

// torchao amax_to_scale (torchao-mx.md §2.1): one float64 division rounded once to fp32,
//   s = (float)((double)fp8_max / max((double)amax, 1e-12))
// NaN amax -> NaN (torch.clamp keeps NaN); +Inf -> 0; 0 -> (float)(fp8_max / 1e-12).
// Then, if pow2, torchao_round_scale_down_to_power_of_2(s).
float torchao_scale_from_amax(float amax, float fp8_max, bool pow2);

// torchao _round_scale_down_to_power_of_2 (torchao-mx.md §2.2): exp2f(floorf(log2f(s))) with a
// correctly rounded fp32 log2. Because log2 is rounded to fp32 first, the last floats below 2^k
// give 2^k, not 2^(k-1) (FLT_MAX -> +Inf). NOT a mantissa mask. Computed as log2 in double,
// rounded to float (the reference's recipe for a correctly rounded fp32 log2).
float torchao_round_scale_down_to_power_of_2(float scale);

// torchao "tensorwise" cast (torchao-mx.md §2.1, §2.3):
//   amax = max |x| with NaN propagating; if `reduce`: MAX over ranks;
//   s = torchao_scale_from_amax(amax, fp8_max(format), pow2);
//   q = RNE(clamp(RN(x * s), ±fp8_max)), which is cast_satfinite(RN(x * s)) (§5.5);
//   scale_inv = RN(1 / s) (what torchao hands _scaled_mm: a_scale.reciprocal()), scale = s.
// `threads` as in quantize_current_te.
QuantizeResult quantize_tensorwise_torchao(std::span<const float> x, std::int64_t rows,
                                           std::int64_t cols, Format format, bool pow2 = false,
                                           const AmaxReducer& reduce = {}, int threads = 1);

// Quantizes all of x with one given scale (the per-tensor mechanics shared by delayed and current
// scaling): q = cast_satfinite(RN(x * scale)), scale_inv = RN(1 / scale); on `threads` in chunks
// of kPerTensorChunk elements, the same bits.
QuantizeResult quantize_per_tensor(const char* function, std::span<const float> x,
                                   std::int64_t rows, std::int64_t cols, Format format, float scale,
                                   int threads = 1);

// Elements per unit of work of the per-tensor quantizers on threads: 128 KiB of fp32, large
// enough that handing a chunk to a worker costs little beside it.
inline constexpr std::size_t kPerTensorChunk = std::size_t{1} << 15;

}  // namespace fp8lab::sim::scaling
