// The settings of FP8 training numerics, each described once: which FP8 format pair a recipe
// uses, how an MX block picks its E8M0 scale and which torchao it follows, how a GEMM accumulates,
// how delayed scaling reads its amax history, the three GEMMs of a Linear with their operands, and
// the block shapes of block and MX scaling, and the precision of the tensors outside the GEMMs
// that a recipe may quantize too (ElementwisePrecision). recipes/ (names in files:
// recipes/recipe.cpp), sim/ and gpu/ all use these types; nothing converts between copies,
// because there are none.
//
// Header-only, constexpr and free of heavy dependencies (sim/format.hpp and the standard library)
// so that gpu/ (nvcc) and recipes/ may include it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "sim/format.hpp"
#include "sim/name_table.hpp"

namespace fp8lab::sim {

// docs/numerics.md §3: the summation model of one GEMM (sim/gemm/gemm.hpp has the order of operations;
// gpu/gemm runs every model but kExact).
enum class Accumulation : std::uint8_t {
  kFp32Seq,                 // the reference order (docs/numerics.md §3)
  kHopperSplitAccumulator,  // sm_90 wgmma, promoted every 128 K (TE use_split_accumulator=True)
  kHopperFastAccum,         // sm_90 wgmma, never promoted (TE fprop default, cuBLASLt FAST_ACCUM)
  kExact,                   // exact block sums (error measurement)
  // Blackwell block-scaled MMA (kind::mxf8f6f4 / mxf4nvf4) as MMA-Sim models it: operands with
  // raw UE8M0 / UE4M3 scale bytes, sim::block_scaled_gemm (sim/gemm/block_scaled.hpp).
  kBlackwellBlock,
};
// sim's own names of the GEMM models (a recipe file spells the ones it offers its own way:
// recipes/recipe.cpp).
inline constexpr NameTable<Accumulation, 5> kAccumulationNames{
    {{Accumulation::kFp32Seq, "fp32_seq"},
     {Accumulation::kHopperSplitAccumulator, "hopper_split_accumulator"},
     {Accumulation::kHopperFastAccum, "hopper_fast_accum"},
     {Accumulation::kExact, "exact"},
     {Accumulation::kBlackwellBlock, "blackwell_block"}}};
constexpr const char* to_string(Accumulation a) { return name_in(kAccumulationNames, a); }

}  // namespace fp8lab::sim

namespace fp8lab::sim::scaling {

// TE `recipe.Format` (te-accelerate.md §2.1-2.2; docs/numerics.md §2.1): which FP8 format the forward
// tensors (input, weight) and the backward tensors (grad_output) get.
//   kHybrid: E4M3 forward, E5M2 backward.   kE4M3: E4M3 everywhere.
//   kE5M2:   E5M2 everywhere (TE asserts "Pure E5M2 training is not supported."; we run it).
enum class Fp8Format : std::uint8_t { kHybrid, kE4M3, kE5M2 };
// The names below are also the words of recipe files (recipes/recipe.cpp reads these tables).
inline constexpr NameTable<Fp8Format, 3> kFp8FormatNames{
    {{Fp8Format::kHybrid, "HYBRID"}, {Fp8Format::kE4M3, "E4M3"}, {Fp8Format::kE5M2, "E5M2"}}};
constexpr const char* to_string(Fp8Format format) { return name_in(kFp8FormatNames, format); }
constexpr Format forward_format(Fp8Format format) {
  return format == Fp8Format::kE5M2 ? Format::E5M2 : Format::E4M3;
}
constexpr Format backward_format(Fp8Format format) {
  return format == Fp8Format::kE4M3 ? Format::E4M3 : Format::E5M2;
}

// docs/numerics.md §2.5: how an MX block's E8M0 scale comes from its amax (the table in
// sim/scaling/mx.hpp): TE's rule, or torchao's floor, ceil, even and rceil.
enum class E8M0Mode : std::uint8_t { kTe, kFloor, kCeil, kEven, kRceil };
inline constexpr NameTable<E8M0Mode, 5> kE8M0ModeNames{{{E8M0Mode::kTe, "te"},
                                                        {E8M0Mode::kFloor, "floor"},
                                                        {E8M0Mode::kCeil, "ceil"},
                                                        {E8M0Mode::kEven, "even"},
                                                        {E8M0Mode::kRceil, "rceil"}}};
constexpr const char* to_string(E8M0Mode mode) { return name_in(kE8M0ModeNames, mode); }

// Which torchao `to_mx` the torchao MX modes follow (torchao-mx.md §4.2-4.3; sim/scaling/mx.hpp):
//   kV0_18: torchao v0.18.0, the release users install (pinned; the default);
//   kMain:  torchao main after PR #4725 (5d73a0c10), which changed NaN/Inf, tiny blocks and rceil.
// kTe ignores it.
enum class TorchaoVersion : std::uint8_t { kV0_18, kMain };
inline constexpr NameTable<TorchaoVersion, 2> kTorchaoVersionNames{
    {{TorchaoVersion::kV0_18, "torchao-0.18"}, {TorchaoVersion::kMain, "torchao-main"}}};
constexpr const char* to_string(TorchaoVersion version) {
  return name_in(kTorchaoVersionNames, version);
}

// NVFP4 (fp4-formats.md §3; sim/scaling/nvfp4.hpp): 16-element E2M1 blocks with an E4M3 block
// scale and an fp32 per-tensor scale, computed as one of two peers does (they differ bit for bit):
//   kTe:      TE's kernels (cast/nvfp4/core_nvfp4.cuh, quantize_transpose_nvfp4.cuh);
//   kTorchao: torchao 0.18's nvfp4_quantize with the dynamic per-tensor scale;
//   kTorchaoTraining: torchao 0.18's NVFP4TrainingConfig (prototype/moe_training/nvfp4_training:
//             its Triton kernels' _nvfp4_quantize and _nvfp4_2d_quantize on bf16 operands).
enum class Nvfp4Mode : std::uint8_t { kTe, kTorchao, kTorchaoTraining };
inline constexpr NameTable<Nvfp4Mode, 3> kNvfp4ModeNames{
    {{Nvfp4Mode::kTe, "te"},
     {Nvfp4Mode::kTorchao, "torchao"},
     {Nvfp4Mode::kTorchaoTraining, "torchao_training"}}};
constexpr const char* to_string(Nvfp4Mode mode) { return name_in(kNvfp4ModeNames, mode); }
inline constexpr std::int64_t kNvfp4BlockSize = 16;

// Precision of a tensor outside the GEMMs that a recipe may quantize as well: LayerNorm's affine
// weight and bias, or an activation function's input and output. Su et al. 2025 (arXiv
// 2506.20752) train through microsoft/microxcaling, which rounds these to bfloat16 and does the
// elementwise math in bfloat16 (its vec_quantize with bfloat 16); their diagnosis of the
// divergence is the MX scale clipping LayerNorm weights within a block.
//   kHigh: untouched (the model's fp32), what TE and torchao do;
//   kBf16: rounded to bfloat16 (RN), elementwise math in bfloat16, as microxcaling does;
//   kMx:   MX-quantized in 1 x 32 blocks along the last dimension with the recipe's E8M0 mode and
//          forward element format, then elementwise math in bfloat16.
enum class ElementwisePrecision : std::uint8_t { kHigh, kBf16, kMx };
inline constexpr NameTable<ElementwisePrecision, 3> kElementwisePrecisionNames{
    {{ElementwisePrecision::kHigh, "high"},
     {ElementwisePrecision::kBf16, "bf16"},
     {ElementwisePrecision::kMx, "mx"}}};
constexpr const char* to_string(ElementwisePrecision precision) {
  return name_in(kElementwisePrecisionNames, precision);
}

// TE amax_compute_algo. Through accelerate TE always runs `max` (te-accelerate.md §1.2).
enum class AmaxComputeAlgo : std::uint8_t { kMax, kMostRecent };
inline constexpr NameTable<AmaxComputeAlgo, 2> kAmaxComputeAlgoNames{
    {{AmaxComputeAlgo::kMax, "max"}, {AmaxComputeAlgo::kMostRecent, "most_recent"}}};
constexpr const char* to_string(AmaxComputeAlgo algo) {
  return name_in(kAmaxComputeAlgoNames, algo);
}

// ---- the GEMMs of a Linear and their operands ----------------------------------------------
// Which way the scales of a GEMM operand run. Every per-row / per-block recipe puts its blocks
// along the reduction dimension K of the GEMM that consumes the operand, so the same tensor is
// scaled along different axes in different GEMMs (torchao-mx.md §2.4 for axiswise, §4.4 and
// te-accelerate.md §4.2 for MXFP8; they agree).
//
// Tensors as a Linear stores them, row-major:  X = input [M, K],  W = weight [N, K],
// dY = grad_output [M, N]. Operands in TE's order (a, b):
//
//   GEMM                      operand  reduction dim  scales run along      ScaleAxis
//   fprop  Y  = X @ W^T       a = X    K (cols)       each row              kRowwise   (1 x C)
//                             b = W    K (cols)       each row              kRowwise
//   dgrad  dX = dY @ W        a = dY   N (cols)       each row              kRowwise
//                             b = W    N (rows)       each column           kColumnwise (R x 1)
//   wgrad  dW = dY^T @ X      a = dY   M (rows)       each column           kColumnwise
//                             b = X    M (rows)       each column           kColumnwise
//
// kRowwise means one scale (or one block of scales) per row, computed across the columns; for
// torchao that is axiswise_dim = -1 of the stored tensor, for MX the 1 x 32 "rowwise" copy. The
// same column says where K is: the stored columns exactly when the scales run along rows.
enum class Gemm : std::uint8_t { kFprop, kDgrad, kWgrad };
enum class Operand : std::uint8_t { kInput, kWeight, kGradOutput };
enum class ScaleAxis : std::uint8_t { kRowwise, kColumnwise };

inline constexpr NameTable<Gemm, 3> kGemmNames{
    {{Gemm::kFprop, "fprop"}, {Gemm::kDgrad, "dgrad"}, {Gemm::kWgrad, "wgrad"}}};
inline constexpr NameTable<Operand, 3> kOperandNames{{{Operand::kInput, "input"},
                                                      {Operand::kWeight, "weight"},
                                                      {Operand::kGradOutput, "grad_output"}}};
inline constexpr NameTable<ScaleAxis, 2> kScaleAxisNames{
    {{ScaleAxis::kRowwise, "rowwise"}, {ScaleAxis::kColumnwise, "columnwise"}}};
constexpr const char* to_string(Gemm gemm) { return name_in(kGemmNames, gemm); }
constexpr const char* to_string(Operand operand) { return name_in(kOperandNames, operand); }
constexpr const char* to_string(ScaleAxis axis) { return name_in(kScaleAxisNames, axis); }

struct GemmOperands {
  Operand a;
  Operand b;
};
// The table's (a, b) of a GEMM.
constexpr GemmOperands gemm_operands(Gemm gemm) {
  switch (gemm) {
    case Gemm::kFprop: return {Operand::kInput, Operand::kWeight};
    case Gemm::kDgrad: return {Operand::kGradOutput, Operand::kWeight};
    case Gemm::kWgrad: break;
  }
  return {Operand::kGradOutput, Operand::kInput};
}

// Whether `operand` is an operand of `gemm` (fprop: X, W; dgrad: dY, W; wgrad: dY, X).
constexpr bool uses_operand(Gemm gemm, Operand operand) {
  const GemmOperands o = gemm_operands(gemm);
  return operand == o.a || operand == o.b;
}

// The table above. Throws std::invalid_argument when `operand` is not an operand of `gemm`.
constexpr ScaleAxis scale_axis(Gemm gemm, Operand operand) {
  if (!uses_operand(gemm, operand)) {
    throw std::invalid_argument(std::string("scale_axis: operand = ") + to_string(operand) +
                                " is not an operand of gemm = " + to_string(gemm) +
                                "; fprop: input, weight; dgrad: grad_output, weight; wgrad: "
                                "grad_output, input");
  }
  if (gemm == Gemm::kFprop) return ScaleAxis::kRowwise;
  if (gemm == Gemm::kWgrad) return ScaleAxis::kColumnwise;
  return operand == Operand::kGradOutput ? ScaleAxis::kRowwise : ScaleAxis::kColumnwise;
}

// Whether K is the stored columns of `operand` in `gemm` (else its rows): the table's last column.
constexpr bool k_is_cols(Gemm gemm, Operand operand) {
  return scale_axis(gemm, operand) == ScaleAxis::kRowwise;
}

// ---- block shapes ----------------------------------------------------------------------------
// Rows x cols of the elements that share one scale.
struct BlockShape {
  std::int64_t rows = 1;
  std::int64_t cols = 1;
  // Spelled out: gpu/ compiles as C++17 (nvcc), which has no defaulted comparisons.
  friend constexpr bool operator==(const BlockShape& a, const BlockShape& b) {
    return a.rows == b.rows && a.cols == b.cols;
  }
  friend constexpr bool operator!=(const BlockShape& a, const BlockShape& b) { return !(a == b); }
};

// TE Float8BlockScaling (te-accelerate.md §5.3; docs/numerics.md §2.4).
inline constexpr BlockShape kBlock1x128{1, 128};
inline constexpr BlockShape kBlock128x1{128, 1};
inline constexpr BlockShape kBlock128x128{128, 128};
// MXFP8 (docs/numerics.md §2.5): 32 consecutive elements share one E8M0 scale.
inline constexpr std::int64_t kMxBlockSize = 32;

// The block one GEMM reads under TE block scaling (x_block_scaling_dim = 1,
// w_block_scaling_dim = 2, grad_block_scaling_dim = 1): the weight in 128 x 128 tiles in every
// GEMM; input and grad_output in 1 x 128 or 128 x 1 blocks along the GEMM's K.
constexpr BlockShape te_block_shape(Gemm gemm, Operand operand) {
  const ScaleAxis axis = scale_axis(gemm, operand);  // throws for an operand the GEMM lacks
  if (operand == Operand::kWeight) return kBlock128x128;
  return axis == ScaleAxis::kRowwise ? kBlock1x128 : kBlock128x1;
}

// One MX copy: 1 x 32 blocks (kRowwise, along the columns) or 32 x 1 (kColumnwise).
constexpr BlockShape mx_block_shape(ScaleAxis axis) {
  return axis == ScaleAxis::kRowwise ? BlockShape{1, kMxBlockSize} : BlockShape{kMxBlockSize, 1};
}

}  // namespace fp8lab::sim::scaling
