// Which way the scales of a GEMM operand run. Every per-row / per-block recipe puts its blocks
// along the reduction dimension K of the GEMM that consumes the operand, so the same tensor is
// scaled along different axes in different GEMMs (torchao-mx.md §2.4 for axiswise, §4.4 and
// te-accelerate.md §4.2 for MXFP8; they agree).
//
// Tensors as a Linear stores them, row-major:  X = input [M, K],  W = weight [N, K],
// dY = grad_output [M, N].
//
//   GEMM                      operand  reduction dim  scales run along      ScaleAxis
//   fprop  Y  = X @ W^T       X        K (cols)       each row              kRowwise   (1 x C)
//                             W        K (cols)       each row              kRowwise
//   dgrad  dX = dY @ W        dY       N (cols)       each row              kRowwise
//                             W        N (rows)       each column           kColumnwise (R x 1)
//   wgrad  dW = dY^T @ X      dY       M (rows)       each column           kColumnwise
//                             X        M (rows)       each column           kColumnwise
//
// kRowwise means one scale (or one block of scales) per row, computed across the columns; for
// torchao that is axiswise_dim = -1 of the stored tensor, for MX the 1 x 32 "rowwise" copy.
#pragma once

#include <cstdint>

namespace fp8lab::sim::scaling {

enum class Gemm : std::uint8_t { kFprop, kDgrad, kWgrad };
enum class Operand : std::uint8_t { kInput, kWeight, kGradOutput };
enum class ScaleAxis : std::uint8_t { kRowwise, kColumnwise };

const char* to_string(Gemm gemm);
const char* to_string(Operand operand);
const char* to_string(ScaleAxis axis);

// Whether `operand` is an operand of `gemm` (fprop: X, W; dgrad: dY, W; wgrad: dY, X).
bool uses_operand(Gemm gemm, Operand operand);

// The table above. Throws std::invalid_argument when `operand` is not an operand of `gemm`.
ScaleAxis scale_axis(Gemm gemm, Operand operand);

}  // namespace fp8lab::sim::scaling
