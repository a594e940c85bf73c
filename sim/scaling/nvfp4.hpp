// NVFP4 (fp4-formats.md §3): E2M1 elements in blocks of 16, each block with an E4M3 scale, the
// whole tensor with an fp32 scale. Two modes, because the peers disagree bit for bit (§3c):
//
// kTe, TE's kernels (common/cast/nvfp4/core_nvfp4.cuh: compute_global_encode_scaling_factor_FP4,
// compute_decoding_scaling_factor, compute_scaling_coefficient<float>):
//   amax  = max |x| over the tensor, NaN ignored (fmaxf)
//   S_enc = fminf(2688.0f / amax, FLT_MAX), 1 when amax == 0 or S_enc == 0 (amax = Inf);
//   S_dec = 1.0f / S_enc
//   s_b   = e4m3_satfinite(amax_b * (S_enc * fp32(1/6)))   amax_b NaN-ignoring; no lower clamp:
//           E4M3 subnormals and 0x00 are emitted; >= 448 and Inf -> 0x7E
//   enc_b = fminf(1.0f / (float(s_b) * S_dec), FLT_MAX)    a zero scale gives FLT_MAX
//   q     = cvt.rn.satfinite.e2m1(x * enc_b)               NaN -> +6 (kSubbyteCuda)
// kTorchao, torchao 0.18's nvfp4_quantize with per_tensor_scale = per_tensor_amax_to_scale(
// torch.max(torch.abs(x))) (mx_formats/nvfp4_tensor.py, the same at HEAD):
//   pts   = amax / 2688.0f                                 amax NaN-propagating, no guards
//   s_b   = e4m3(clamp((amax_b / 6.0f) / pts, 2^-6, 448))  amax_b NaN-propagating: never
//           subnormal, never 0; a NaN (0/0 for an all-zero tensor) gives 0xFF
//   enc_b = (1.0f / pts) / float(s_b)
//   q     = f32_to_f4_unpacked(clamp(x * enc_b, -6, 6))    kSubbyteTorchao on the NaN product
//           torch gives (nvfp4.cpp: every NaN followed bit for bit, docs/fp4.md)
// kTorchaoTraining, torchao 0.18's NVFP4TrainingConfig (prototype/moe_training/nvfp4_training/:
// hadamard_utils.py _nvfp4_quantize, quantize_2d_triton.py _nvfp4_2d_quantize; read at the
// installed 0.18.0):
//   x     = bf16(x)                                        the kernels take bf16 operands only
//   amax  = max |x| over the tensor, NaN-propagating (tl.maximum, PropagateNan.ALL)
//   S_enc, S_dec as kTe (the kernels spell TE's rule)
//   s_b   = e4m3(clamp((amax_b / 6.0f) * S_enc, 2^-6, 448))   RN; TE's values, torchao's order
//           and floor
//   enc_b = fminf(1.0f / (float(s_b) * S_dec), FLT_MAX)    as kTe
//   q     = cvt.rn.satfinite.e2m1(clamp(x * enc_b, -6, 6)) (kSubbyteCuda; NaN elements and NaN
//           amaxes are not checked: the kernels run on Blackwell only)
// Both: blocks of 16 along the rows (1 x 16), along the columns (16 x 1: the codes of xᵀ, as TE's
// columnwise copy and torchao on x.t().contiguous() give them), or 16 x 16 tiles (TE's 2-D weight
// quantization: one scale per tile, so the columnwise codes are the transposed rowwise codes).
// The per-tensor amax is the whole tensor's in every shape (TE's own columnwise amax applies only
// with the RHT, which is not here).
//
// The result: data = one E2M1 code per byte (pack_e2m1 packs them, element 2i in the low nibble);
// scale_e4m3 = s_b; scale = enc_b; scale_inv = float(s_b) * S_dec (kTe) or float(s_b) * pts
// (kTorchao), so that x ~= decode(q) * scale_inv; global_scale = {amax, S_enc, S_dec} with, for
// kTorchao, S_dec = pts and S_enc = 1.0f / pts.
#pragma once

#include <cstdint>
#include <span>

#include "sim/scaling/common.hpp"
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

struct Nvfp4Global {
  float amax = 0.0f;
  float encode = 1.0f;  // S_enc (kTorchao: 1 / pts)
  float decode = 1.0f;  // S_dec (kTorchao: pts)
};

// The per-tensor scale from the tensor's amax (already NaN-ignoring for kTe, NaN-propagating for
// kTorchao).
Nvfp4Global nvfp4_global_scale(float amax, Nvfp4Mode mode);
// The E4M3 code of a block's scale from its amax (NaN-ignoring for kTe; NaN for a block holding a
// NaN in kTorchao).
std::uint8_t nvfp4_block_scale(float block_amax, const Nvfp4Global& global, Nvfp4Mode mode);
// enc_b, the multiplier of a block's elements before the cast.
float nvfp4_block_multiplier(std::uint8_t scale_e4m3, const Nvfp4Global& global, Nvfp4Mode mode);

// The Philox stream of a stochastically rounded tensor (sim/fp4_stochastic.hpp): element i of
// the tensor (row-major) takes byte i % 4 of philox_random_word(seed, stream, i / 4).
struct StochasticStream {
  std::uint64_t seed = 0;
  std::uint64_t stream = 0;
};

// One NVFP4 copy of x [rows, cols] in `block` (1 x 16, 16 x 1 or 16 x 16; partial edge blocks use
// their valid elements, the peers require multiples of 16). std::invalid_argument for another
// block shape and as quantize_blocked for bad shapes.
// With `stochastic` (kTe: TE's NVFP4BlockScaling rounds gradients so; kTorchaoTraining: torchao's
// NVFP4TrainingConfig does, with cvt.rs.satfinite.e2m1x4, the rule TE's is; kTorchao is torchao's
// nvfp4_quantize, which has no such mode: std::invalid_argument), the scales are the
// same and each element's code is e2m1_stochastic_code(x * enc_b, its byte of the stream)
// instead of the RN cast; the statistics' underflow count is that of the stochastic codes.
QuantizeResult quantize_nvfp4(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                              BlockShape block, Nvfp4Mode mode,
                              const StochasticStream* stochastic = nullptr);

// torchao 0.18's nvfp4_quantize(x, 16, per_tensor_scale=None), its single-level scaling (no
// per-tensor scale; torchao's NVFP4Tensor.to_nvfp4 without a per_tensor_scale):
//   s_b   = e4m3(clamp(amax_b / 6.0f, 2^-6, 448))   q = f32_to_f4_unpacked(clamp(x * (1.0f / s_b)))
// which is kTorchao's arithmetic with pts = 1 exactly ((amax_b / 6) / 1 and (1 / 1) / s_b are the
// same floats), so it is that with global_scale = {amax, 1, 1}. Blocks as quantize_nvfp4.
QuantizeResult quantize_nvfp4_single_level(std::span<const float> x, std::int64_t rows,
                                           std::int64_t cols, BlockShape block);

// The block an operand is read with in a GEMM: 1 x 16 or 16 x 1 along the GEMM's K, or 16 x 16
// for the weight with `weight_2d` (TE's NVFP4BlockScaling default for weights).
BlockShape nvfp4_block_shape(Gemm gemm, Operand operand, bool weight_2d);

}  // namespace fp8lab::sim::scaling
