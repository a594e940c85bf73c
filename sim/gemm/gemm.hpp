// Quantized GEMM with the accumulation models of docs/numerics.md §3, and the high-precision GEMM of
// baselines and overridden GEMMs.
//
//   C[M, N] = sum over k of A(m, k) * B(n, k)
//
// Each operand is a stored tensor plus the name of its stored dimension that is the GEMM's K, so
// the three GEMMs of a Linear (X [M,K], W [N,K], dY [M,N]) need no copies:
//
//   fprop  Y [M,N]  = X W^T    gemm({X,  kCols}, {W,  kCols})   K = in_features
//   dgrad  dX[M,K]  = dY W     gemm({dY, kCols}, {W,  kRows})   K = out_features (rows of W)
//   wgrad  dW[N,K]  = dY^T X   gemm({dY, kRows}, {X,  kRows})   K = tokens (rows of dY and X)
//
// Scale blocks follow the stored tensor (sim/tensor.hpp): an MX rowwise copy has 1x32 blocks
// along its columns, its columnwise copy 32x1 blocks along its rows, so a copy whose blocks run
// along the GEMM's K is the one to pass. Any mix is accepted as long as each scale is constant
// over the K-blocks defined below; the error names the operand otherwise.
//
// ---------------------------------------------------------------------------------------------
// The order of operations (the CUDA twin in gpu/gemm/ must follow it to the bit)
// ---------------------------------------------------------------------------------------------
// Notation: RN(x) = one fp32 round-to-nearest-even; a_k = decode(A code), b_k = decode(B code),
// both exact in fp32; every product a_k * b_k is exact in fp32 (at most 8 significant bits,
// magnitude in [2^-32, 2^32)), so an FMA and a multiply-then-add give the same bits.
//
// K-blocks. Along K each operand's scale is constant over runs of `kb` elements, kb =
// block_cols (K = cols) or block_rows (K = rows), or over all of K when kb >= K. The GEMM's
// K-block length is g = K when both operands' runs cover K, else the smaller run length, which the
// other must divide (or cover K). Block j is k in [j*g, min((j+1)*g, K)); sa_j(m), sb_j(n) are the
// scale_inv values of the operands' elements there.
//   per-tensor, rowwise/columnwise over K, torchao rowwise: one block (g = K)
//   1x128 x 128x128, 1x128 x 1x128: g = 128;  MXFP8 1x32 (or 32x1) x 1x32: g = 32
//
// Per output (m, n), with the block partial sum P_j formed by the chosen model:
//   s_j   = RN(sa_j(m) * sb_j(n))
//   t_j   = RN(P_j * s_j)
//   total = t_0, then total = RN(total + t_j) for j = 1, 2, ... (increasing j)
//   out   = bias empty ? total : RN(total + bias[n]);   bf16 output: fp32_to_bf16(out) (RN)
// A single block therefore gives docs/numerics.md §3's out = RN(acc * RN(sa_inv * sb_inv)).
// Every NaN output is the canonical fp32 NaN 0x7FFFFFFF (the GPU's), before the bf16 conversion.
//
// P_j by model (k runs over the block's elements in increasing order):
//   kFp32Seq  acc = +0.0f, then acc = RN(acc + a_k * b_k) for each k; P_j = acc.
//   kHopperSplitAccumulator / kHopperFastAccum  (tensorcore-and-papers.md §0, §1.6): the block is
//     cut into groups of 32 consecutive k (one wgmma; the last may be shorter), chained through an
//     e8m13 accumulator c that starts at +0. One group: E = max(e_a + e_b over the nonzero
//     products, e_c if c != 0), where e is the raw exponent of a value (a subnormal FP8 value has
//     its format's minimum normal exponent; products are not renormalized); every term (products
//     and c) is truncated toward zero onto the grid 2^(E-13); the terms are summed exactly; the sum
//     is truncated toward zero to 13 fraction bits (fp32 with its low 10 mantissa bits zero); -0
//     becomes +0. If any term is NaN or Inf, the group's result is the float64 sum of its terms
//     (NaN, or an Inf). Promotion: P_j = +0.0f, then P_j = RN(P_j + c) and c = +0 after every
//     group whose end lies a multiple of 128 elements after the block start (split accumulator
//     only), and after the block's last group (both: a block's scales apply to its sum only).
//     So fast_accum differs from split only inside blocks longer than 128 (per-tensor, rowwise).
//     Hopper has no MX hardware; for g = 32 this is a promotion after every wgmma, which is what
//     an emulation of per-32 scales on sm_90 must do.
//   kExact    P_j = the exact sum (integer arithmetic), rounded once to float64, and the blocks are
//     combined in float64: total64 = sum over j of P_j * ((double)sa_j * sb_j); gemm() then uses
//     total = RN(total64) in the epilogue above. gemm_exact() returns total64 (plus bias in
//     float64) for error measurement. An output whose products include NaN or Inf gets the float64
//     sum of its products in k order (NaN or an Inf) as P_j.
//
// pad_inner_dim (torchao, torchao-mx.md §2.6): K is zero-padded to a multiple of 16 after
// quantization, scales unchanged; the padding belongs to the last block (no block is added).
// It adds products +0 * +0 = +0 at the end, which changes no model's result: fp32_seq adds +0 to
// an accumulator that is never -0 (it starts at +0, and RN(x + y) is -0 only when both are -0);
// hopper ignores zero products in the alignment maximum, a group of only zero products returns c
// unchanged (c is on its own e8m13 grid), and the promotion after the block's last group happens
// either way; the exact sum is unchanged. So padding never changes a bit (tested for every model
// and scaling kind); the option exists so that padded operands take torchao's path.
//
// Threads: output tiles are shared among the caller and threads - 1 workers of a persistent pool;
// every output is computed by one thread in the order above, so the bits do not depend on the
// thread count (tests run 1, 2 and 3 threads on every SIMD target).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "sim/settings.hpp"
#include "sim/tensor.hpp"

namespace fp8lab::sim {

// Which stored dimension of an operand is the GEMM's reduction dimension K.
enum class ReduceDim : std::uint8_t { kCols, kRows };

// Accumulation (the models above) is described in sim/settings.hpp.
// Parses "fp32_seq", "hopper_split_accumulator", "hopper_fast_accum", "exact",
// "blackwell_block"; anything else throws std::invalid_argument listing these. gemm() runs
// blackwell_block through sim::block_scaled_gemm (sim/gemm/block_scaled.hpp) on MX and NVFP4
// tensors (their raw UE8M0 / UE4M3 scale bytes, laid out K-contiguous; NVFP4's per-tensor decode
// scales then multiply the result as alpha = RN(S_dec_A * S_dec_B), before the epilogue below)
// and refuses other operands. FP4/FP6 operands (E2M1, E2M3, E3M2) take fp32_seq, exact and
// blackwell_block; the Hopper models refuse them (Hopper has no FP4/FP6 MMA).
Accumulation parse_accumulation(std::string_view name);

enum class GemmOutputType : std::uint8_t { kFp32, kBf16 };

// Elements per wgmma FP8 instruction along K, and the split accumulator's promotion interval
// (CUTLASS mma_promotion_interval = 4 wgmma, DeepSeek-V3 N_C = 128).
inline constexpr std::int64_t kHopperGroupK = 32;
inline constexpr std::int64_t kHopperPromotionK = 128;
// Fraction bits the Hopper FP8 datapath keeps (Khattak & Mikaitis Table 3; MMA-Sim "f32_e8m13").
inline constexpr int kHopperFractionBits = 13;
// torchao's pad_inner_dim multiple.
inline constexpr std::int64_t kPadInnerDimMultiple = 16;

struct GemmOperand {
  const QuantizedTensor& tensor;
  ReduceDim k_dim;
};

struct GemmOptions {
  Accumulation accumulation = Accumulation::kFp32Seq;
  GemmOutputType output = GemmOutputType::kFp32;
  std::span<const float> bias;  // empty, or N values added to every row
  bool pad_inner_dim = false;
  int threads = 1;  // >= 1
};

// The shape of C for these operands; throws std::invalid_argument on inconsistent operands.
struct GemmShape {
  std::int64_t m = 0, n = 0, k = 0;
};
GemmShape gemm_shape(const GemmOperand& a, const GemmOperand& b);

// C row-major [M, N] into `out` (size M * N). bf16 output: values are bf16, stored as their exact
// fp32 value. Throws std::invalid_argument naming the field on bad operands or options.
void gemm_into(const GemmOperand& a, const GemmOperand& b, const GemmOptions& options,
               std::span<float> out);
std::vector<float> gemm(const GemmOperand& a, const GemmOperand& b, const GemmOptions& options);

// The kExact model before its final RN to fp32 (bias added in float64 when given).
std::vector<double> gemm_exact(const GemmOperand& a, const GemmOperand& b,
                               std::span<const float> bias = {}, int threads = 1);

// ---------------------------------------------------------------------------------------------
// High-precision GEMM (baselines, GEMMs overridden by override_linear_precision): fp32 operands,
// optionally rounded RN to bf16 first (bf16 operands as docs/numerics.md §3 says), fp32 accumulation in
// the fp32_seq order with the product rounded separately, because fp32 products are not exact:
//   acc = +0.0f, then acc = RN(acc + RN(a_k * b_k)) for k = 0, 1, ... (no FMA);
//   out = bias empty ? acc : RN(acc + bias[n]); NaN -> 0x7FFFFFFF; bf16 output RN.
struct DenseOperand {
  std::span<const float> data;  // row-major [rows, cols]
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  ReduceDim k_dim = ReduceDim::kCols;
};

struct HighPrecisionGemmOptions {
  bool round_operands_to_bf16 = false;
  GemmOutputType output = GemmOutputType::kFp32;
  std::span<const float> bias;
  int threads = 1;
};

void high_precision_gemm_into(const DenseOperand& a, const DenseOperand& b,
                              const HighPrecisionGemmOptions& options, std::span<float> out);
std::vector<float> high_precision_gemm(const DenseOperand& a, const DenseOperand& b,
                                       const HighPrecisionGemmOptions& options);

}  // namespace fp8lab::sim
