// MXFP4 backward operands as Tseng et al. quantize them ("Training LLMs with MXFP4", arXiv
// 2502.20586), read in their code: amazon-science/mxfp4-llm at 0cc57fe, `Megatron-LM.patch`
// (MXFP4LinearWithGradAccumulationAndAsyncCommunication.backward, BW_USE_MXFP4 = 3) and
// `microxcaling.patch` over microsoft/microxcaling at 7bc4195 (`mx/mx_ops.py` _quantize_mx with
// round 'dither_scale', `mx/elemwise_ops.py` _quantize_elemwise_core and _round_mantissa 'dither').
//
// The random Hadamard transform (mx_rht_bf16): each backward GEMM's two operands are multiplied
// along the GEMM's K, in chunks of HBS = 64 consecutive elements, by S = diag(s) H64 / 8
// (scipy's Sylvester hadamard(64) / sqrt(64), `had` in the patch; s = +-1 drawn afresh on every
// backward call, `torch.randn(HBS) > 0`, one draw for dgrad's pair and another for wgrad's), so
// the GEMM's product is unchanged (S S^T = I). Their operands and `had` are bf16 (Megatron's bf16
// model), the product a bf16 GEMM with fp32 accumulation. Here: x rounded RN to bf16, each output
// y_j = sum_i x_i s_i H[i][j] / 8 summed in fp32 in index order i = 0..63 (each term is exact),
// then rounded RN to bf16. cuBLAS's order of the fp32 sum is not modelled: an output whose fp32
// sum depends on the order can differ in its last bf16 bit from their GPU's.
//
// The sign draw (mx_rht_sign_mask): bit i of the 64-bit mask is set where s_i = -1; the mask is
// philox_random_word(seed, stream, 2 * call) | philox_random_word(seed, stream, 2 * call + 1) << 32
// (sim/rng.hpp), a pure function of (seed, stream, call): reproducible, fresh every call. Their
// torch.randn bits are not reproduced.
//
// The rounding ('dither_scale', quantize_mx_dither_scale), per block of 32 along K:
//   amax = max |x| (NaN if the block holds a NaN);
//   se   = max(floor(log2 amax) - 2, -127)   (E8M0 floor, emax(E2M1) = 2; amax 0 gives -127)
//   a    = RN(RN(3 * x) / 2^(se + 2))        (the 3/4 prescale: |a| < 6, so nothing clips)
//   pe   = max(floor(log2 |a|), 0)           (0 for a = 0)
//   f    = floor(RN(|a| / 2^pe * 2 + u))     (u uniform in [0, 1), fp32 adds: 'dither')
//   q    = sign(a) * f / 2 * 2^pe            (an E2M1 value; sign(a) = 0 for a = +-0)
// and the dequantized value is q * 2^(se + 2) / 3 = q * 2^se * 4/3. Every step is their fp32
// arithmetic (microxcaling's _quantize_mx runs under torch.compile, whose Triton code computes
// bf16 tensors' pointwise chains in fp32). u: element i of the tensor (row-major) takes
// (philox_random_word(seed, stream, i) & 0xFFFFFF) * 2^-24, the 24-bit uniform float of torch's
// `uniform_real` (ATen TransformationHelper.h), not torch.rand_like's bits.
// Stored: codes (E2M1; -0 for a negative a that rounds to 0), scale_e8m0 = se + 127, scale =
// 0.75 * 2^-se (the multiplier x is scaled by), scale_inv = 2^se * fp32(4/3) (so decode(q) *
// scale_inv is the dequantized value up to one rounding), global_scale = {amax of the tensor
// (NaN-ignoring), 0.75, fp32(4/3)}: the block-scaled GEMM model multiplies its result by
// RN(fp32(4/3)^2) as it does NVFP4's decode scales (sim/gemm/block_scaled_quantized.cpp); the
// fp32_seq and exact models read scale_inv. Their dequantization instead rounds each operand's
// q * 2^(se + 2) / 3 to bf16 before a bf16 GEMM: the GEMM's bits are not theirs, the codes and
// scales are.
// Speed: mx_dither_lanes.cpp runs both in Highway lanes with these bits (the RHT's lanes change
// which outputs are summed at once, never the order of an output's sum); the scalar model
// (mx_rht_chunk_scalar, mx_dither_block_scalar) takes the edges. The test compares every SIMD
// target with the reference written from their code.
// Not modelled: a block with NaN or Inf (theirs turns the whole block NaN; here its scale code is
// 255, NaN, and its codes 0, so its dequantized values are NaN too); |x| above FLT_MAX / 3 (their
// 3 * x overflows; here such an element gets the code of +-6); their fp32 torch.log2, which for
// an amax within a few ulps below a large power of two rounds up to it (here the exact exponent).
#pragma once

#include <cstdint>
#include <span>

#include "sim/scaling/common.hpp"
#include "sim/scaling/nvfp4.hpp"  // StochasticStream
#include "sim/settings.hpp"

namespace fp8lab::sim::scaling {

inline constexpr int kMxRhtSize = 64;  // HBS, the patch's default

// The 64-bit sign mask of one draw (above).
std::uint64_t mx_rht_sign_mask(std::uint64_t seed, std::uint64_t stream, std::uint64_t call);

// y = x S in chunks of 64 along K: along the columns for kRowwise (K is the columns, as for 1 x 32
// blocks), along the rows for kColumnwise. Values bf16 (stored as their exact fp32 value).
// std::invalid_argument naming the field unless x and out hold rows * cols values and the chunked
// dimension is a multiple of 64.
void mx_rht_bf16(std::span<const float> x, std::int64_t rows, std::int64_t cols, ScaleAxis axis,
                 std::uint64_t sign_mask, std::span<float> out);

// u of element `index` (above).
float mx_dither_uniform(std::uint64_t seed, std::uint64_t stream, std::uint64_t index);

// The E2M1 code of element x in a block with shared exponent se (-127..127), with uniform u.
std::uint8_t mx_dither_scale_code(float x, int shared_exponent, float u);

// One MXFP4 copy with 'dither_scale' rounding, blocks of 32 along `axis` (1 x 32 for kRowwise,
// 32 x 1 for kColumnwise; partial edge blocks use their valid elements). Statistics: amax
// NaN-ignoring, underflowed counts nonzero finite x whose code is +-0, saturated and nan stay 0.
QuantizeResult quantize_mx_dither_scale(std::span<const float> x, std::int64_t rows,
                                        std::int64_t cols, ScaleAxis axis,
                                        const StochasticStream& stream);

// The Highway target mx_rht_bf16 and quantize_mx_dither_scale dispatch to (tests name it in
// failures).
const char* mx_dither_target_name();

}  // namespace fp8lab::sim::scaling
