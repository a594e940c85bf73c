// Dequantization of a quantized FP8 tensor on the GPU, the twin of sim::scaling::dequantize
// (sim/scaling/stats.hpp): out[r, c] = RN(decode(code[r, c]) * scale_inv[block of (r, c)]), one
// fp32 multiply per element, for every block shape (per tensor, rowwise, 1x128, 128x128, MXFP8
// 1x32 / 32x1 / 32x32). backward_override dequantized (docs/fp4.md) reads the fprop GEMM's codes
// this way on the cuda backend.
//
//   gpu::dequantize  must equal sim::scaling::dequantize, bit for bit on every value that is not
//                    a NaN. Implementation-defined: a NaN's bits. sim's multiply keeps the host's
//                    (x86 returns a NaN operand's payload, or 0xFFC00000 for 0 x Inf), the GPU
//                    writes 0x7FFFFFFF; no Linear output carries them (the high-precision GEMM
//                    writes every NaN as 0x7FFFFFFF), and the checks compare NaN with NaN.
#pragma once

#include <cuda_runtime.h>

#include "gpu/gemm/gemm.hpp"  // DeviceGemmOperand: the device view of sim::QuantizedTensor

namespace fp8lab::gpu {

// t: codes [rows, cols] row-major and scale_inv [ceil(rows/block_rows), ceil(cols/block_cols)]
// row-major in device memory (t.k_is_cols is not read); out: device [rows, cols] row-major fp32.
// Throws std::invalid_argument naming the field for a null pointer, rows, cols or blocks < 1, or
// a format other than E4M3 / E5M2; launches asynchronously on `stream` otherwise.
void dequantize(const DeviceGemmOperand& t, float* out, cudaStream_t stream = nullptr);

namespace host_twin {
// The kernel's per-element code over HOST pointers: experiments_cuda_backend_plan_test checks it
// against sim without a GPU, on every plan's output.
void dequantize(const DeviceGemmOperand& t, float* out);
}  // namespace host_twin

}  // namespace fp8lab::gpu
