// Our operands' scale_inv in the memory layout cuBLASLt reads for FP8 scaling on sm_90 (host step,
// run before the scales are copied to the device). sim::QuantizedTensor keeps one scale_inv per
// block_rows x block_cols block, row-major [ceil(R/block_rows)][ceil(C/block_cols)] (sim/tensor.hpp);
// a GEMM operand here is our row-major [R, C] tensor with K = C (A = [M, K], B = [N, K];
// gpu/cublaslt.hpp), so R is cuBLASLt's "outer" dimension (its M for our B, its N for our A: the
// TN mapping swaps the names, the layouts below are per operand and do not care).
//
// cuBLAS documentation §3.1.4 "Narrow precision data types usage" (cuBLAS 12.9+), §3.1.4.3 outer
// vector scaling and §3.1.4.5.1 "Scaling factors layout" for 128-element 1D / 128x128 2D blocks:
//   block R x C (tensorwise)   SCALAR_32F       1 float
//   block 1 x C (one per row)  OUTER_VEC_32F    R floats, out[r] = scale_inv[r]
//   block 1 x 128              VEC128_32F       "M-major M x L" (the outer dimension contiguous),
//                                               L = ceil(K/128): out[l * R + r] = scale_inv[r * L + l]
//                                               (a transpose; R must be a multiple of 4, so no
//                                               stride padding: TE's CuBLASScaleMunger pads R to 4)
//   block 128 x 128            BLK128x128_32F   "K-major, stride between consecutive columns a
//                                               multiple of 4": L4 = roundup(L, 4) floats per
//                                               128-row block p, out[p * L4 + l] = scale_inv[p * L + l],
//                                               out[p * L4 + l] = 0 for L <= l < L4 (padding, never read)
// The start address must be 16-byte aligned (same sections): cudaMalloc gives 256 bytes.
// TransformerEngine's reference (tests/pytorch/references/blockwise_quantizer_reference.py,
// CuBLASScaleMunger) builds the same two layouts: 1x128 scales transposed to (ceil(C/128),
// roundup(R, 4)), 128x128 scales (ceil(R/128), roundup(ceil(C/128), 4)).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/tensor.hpp"

namespace fp8lab::gpu {

// One operand's cuBLASLt scale mode (CUBLASLT_MATMUL_MATRIX_SCALE_*; the mapping to the cuBLAS
// enum is in gpu/cublaslt.cu).
enum class CublasLtScaleMode : std::uint8_t { kScalar, kOuterVector, kVec128, kBlock128x128 };
const char* to_string(CublasLtScaleMode mode);

// operand.scale_inv in the layout cuBLASLt reads for `mode`, as tabled above. Throws
// std::invalid_argument naming the operand's block shape when it does not fit the mode (scalar:
// one block; outer vector: 1 x C; vec128: 1 x 128; block: 128 x 128 — MXFP8 1x32 and column blocks
// have no cuBLASLt FP8 mode on sm_90), or when a 1 x 128 operand's rows are not a multiple of 4.
std::vector<float> cublaslt_scale_layout(const sim::QuantizedTensor& operand,
                                         CublasLtScaleMode mode);

}  // namespace fp8lab::gpu
