// The FP4/FP6 quantizers and the RHT on the GPU, twins of sim/ (docs/fp4.md):
//
//   gpu::scaling::quantize_mx_subbyte   must equal sim::scaling::quantize_mx / quantize_mx_2d with
//                                        E2M1, E2M3 or E3M2 elements (MXFP4, MXFP6), every mode
//   gpu::scaling::quantize_nvfp4        must equal sim::scaling::quantize_nvfp4 (te, torchao;
//                                        1 x 16, 16 x 1, 16 x 16)
//   gpu::random_hadamard_transform_bf16 must equal sim::random_hadamard_transform_bf16
//
// The per-block code is gpu/scaling/fp4_rules.cuh, one thread per scale block (16 or 32 values,
// 256 for a 16 x 16 tile) or RHT chunk: written to be right, not yet fast (no coalescing work, no
// vector loads). x is fp32 row-major [rows, cols]; outputs as Fp4Outputs says (device pointers;
// scale and scale_inv may be null). NVFP4 runs two stream-ordered launches (the tensor amax into
// out.global[0], then the blocks) with no host synchronization.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "sim/cast.hpp"  // SubbyteSpecials (constants only)
#include "sim/format.hpp"
#include "sim/settings.hpp"

namespace fp8lab::gpu {

namespace scaling {

using sim::scaling::E8M0Mode;
using sim::scaling::Nvfp4Mode;
using sim::scaling::TorchaoVersion;

// Outputs of the FP4/FP6 quantizers, device pointers (host pointers for the twins): codes one a
// byte in x's layout [rows * cols] (sim's QuantizedTensor::data); per block, row-major: the raw
// scale byte (E8M0 for MX, E4M3 for NVFP4), the multiplier applied before the cast (`scale`) and
// the dequantization factor (`scale_inv`); NVFP4's global {amax, encode, decode} (3 floats).
struct Fp4Outputs {
  std::uint8_t* codes = nullptr;
  std::uint8_t* scale_bytes = nullptr;
  float* scale = nullptr;
  float* scale_inv = nullptr;
  float* global = nullptr;  // NVFP4 only
};

// block_rows x block_cols: 1 x 32, 32 x 1 or 32 x 32 (any shape >= 1 is accepted, as sim's walk);
// format E2M1, E2M3 or E3M2 (std::invalid_argument otherwise).
void quantize_mx_subbyte(const float* x, std::int64_t rows, std::int64_t cols,
                         std::int64_t block_rows, std::int64_t block_cols, sim::Format format,
                         E8M0Mode mode, TorchaoVersion torchao, const Fp4Outputs& out,
                         cudaStream_t stream = nullptr);

// block 1 x 16, 16 x 1 or 16 x 16 (std::invalid_argument otherwise); out.global must be set.
void quantize_nvfp4(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                    std::int64_t block_cols, Nvfp4Mode mode, const Fp4Outputs& out,
                    cudaStream_t stream = nullptr);

// The same over host pointers, running fp4_rules.cuh block after block (fp4_host_twin.cu).
namespace host_twin {
void quantize_mx_subbyte(const float* x, std::int64_t rows, std::int64_t cols,
                         std::int64_t block_rows, std::int64_t block_cols, sim::Format format,
                         E8M0Mode mode, TorchaoVersion torchao, const Fp4Outputs& out);
void quantize_nvfp4(const float* x, std::int64_t rows, std::int64_t cols, std::int64_t block_rows,
                    std::int64_t block_cols, Nvfp4Mode mode, const Fp4Outputs& out);
// sim::cast_fp32_to_subbyte's device twin (gpu/subbyte.cuh), compiled for the host.
std::uint8_t cast_subbyte(float x, sim::Format format, sim::SubbyteSpecials specials);
// fp4_rules.cuh's mul_nan_as_x86 (x86's NaN rule for x * m, which the kernels follow), compiled
// for the host, where a test compares it with the host's own multiply.
float mul_nan_as_x86(float x, float m);
}  // namespace host_twin

}  // namespace scaling

// y = RHT(x) in chunks of 16 down the rows (chunks_down_rows: sim::RhtAxis::kRows, TE's use) or
// along them; the chunked dimension a multiple of 16 (std::invalid_argument otherwise). x and y
// device pointers of rows * cols floats (y's values are bf16, stored as fp32).
void random_hadamard_transform_bf16(const float* x, std::int64_t rows, std::int64_t cols,
                                    bool chunks_down_rows, std::uint16_t sign_mask, float* y,
                                    cudaStream_t stream = nullptr);
namespace host_twin {
void random_hadamard_transform_bf16(const float* x, std::int64_t rows, std::int64_t cols,
                                    bool chunks_down_rows, std::uint16_t sign_mask, float* y);
}  // namespace host_twin

}  // namespace fp8lab::gpu
