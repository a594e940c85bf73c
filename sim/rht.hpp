// The 16-point random Hadamard transform (RHT) of TE's NVFP4 recipe, bit for bit as the GPU
// computes it (shared/spec/reference/fp4-formats.md §4): TE applies it to the columnwise copies of
// the wgrad GEMM's operands (X^T and dY^T), along the token dimension, before their amax and NVFP4
// cast; disable_rht turns it off.
//
//   M = diag(sign) * H16 * 0.25, H16[r][c] = (-1)^popcount(r & c) (Sylvester, scipy's hadamard);
//   every chunk x of 16 consecutive elements becomes y = x * M, y_j = sum_i x_i sign_i H[i][j] / 4.
//
// The sign vector is TE's fixed one, `get_wgrad_sign_vector()` in
// transformer_engine/pytorch/tensor/nvfp4_tensor.py: (1,1,1,-1,1,-1,-1,-1,-1,-1,-1,1,-1,1,-1,-1),
// shared by every layer and step; as a mask (bit i set where sign i is -1, TE's
// `get_sign_from_vector`) 0xD7E8. torchao's NVFP4Linear draws a random vector per layer instead.
//
// Checked against TE's own code (NVIDIA/TransformerEngine at d0067d0, 2026-08; issue 41):
// common/recipe/__init__.py's NVFP4BlockScaling sets random_hadamard_transform for the input and
// gradient QParams, not the weight's; pytorch/csrc/quantizer.cpp (NVFP4Quantizer::quantize_impl)
// transforms only the columnwise copy (RHT(x^T): chunks along the tokens), takes the rowwise amax
// of x and the columnwise amax of RHT(x^T) (with_post_rht_amax, always on with RHT), and refuses
// non-bf16 inputs; the sign mask is the fixed vector above, never drawn (with_random_sign_mask
// only chooses it or all +1); hadamard_transform_utils.cuh builds M with entries +-0.25 and the
// sign on the input index, its comment's x.reshape(-1, 16) @ diag(sign) @ H16, as the Python
// reference (custom_recipes/reference_nvfp4.py: sign_mat @ h, times 1/sqrt(16)).
//
// Arithmetic: the input is bf16 (x is rounded RN to bf16 first, as TE takes only bf16 inputs); M
// is exact in bf16; the GPU computes x * M on a bf16 tensor core with fp32 accumulation, one
// K = 16 instruction with C = +0, which MMA-Sim models (kind::f16, F = 25, RZ-FP32, e_zero = -133)
// as: each product x_i * M[i][j] is exact with exponent e(x_i) - 2 (a zero product: -133, as c =
// +0); all 17 terms are truncated toward zero onto the grid 2^(E_max - 25), E_max the largest
// exponent; the exact sum is rounded toward zero to fp32; then y is rounded RN to bf16, the tensor
// TE takes the amax of and casts. A NaN or Inf input makes the chunk's outputs the IEEE sums of
// the terms (NaN, or an Inf), NaN as bf16's canonical 0x7FC0.
#pragma once

#include <cstdint>
#include <span>

namespace fp8lab::sim {

inline constexpr int kRhtSize = 16;
// TE's wgrad sign vector as a mask: bit i set where sign i is -1.
inline constexpr std::uint16_t kTeRhtSignMask = 0xD7E8;

// Along which dimension of a row-major [rows, cols] tensor the 16-element chunks run: kRows for
// TE's use (the columnwise copy of a [tokens, features] tensor: 16 consecutive tokens of one
// feature), kCols for chunks along a row.
enum class RhtAxis : std::uint8_t { kRows, kCols };

// y = RHT(x) as above, same shape and layout, values bf16 (stored as their exact fp32 value).
// Throws std::invalid_argument naming the field: x and out must hold rows * cols values, the
// chunked dimension a multiple of 16.
void random_hadamard_transform_bf16(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                    RhtAxis axis, std::uint16_t sign_mask, std::span<float> out);

// The transform of one chunk (16 values in, 16 bf16 values out): the scalar model.
void random_hadamard_chunk_bf16(const float* x, std::uint16_t sign_mask, float* y);

// random_hadamard_transform_bf16 runs Highway lanes, one chunk a lane (rht_lanes.cpp), and leaves
// chunks with NaN/Inf or tiny values to random_hadamard_chunk_bf16; reference:: runs that on
// every chunk (same contract, same bits), which the tests check the lanes against.
namespace reference {
void random_hadamard_transform_bf16(std::span<const float> x, std::int64_t rows, std::int64_t cols,
                                    RhtAxis axis, std::uint16_t sign_mask, std::span<float> out);
}  // namespace reference

// The Highway target random_hadamard_transform_bf16 dispatches to (tests name it in failures).
const char* rht_target_name();

}  // namespace fp8lab::sim
