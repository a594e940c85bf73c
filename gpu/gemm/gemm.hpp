// Deterministic FP8 GEMM kernels with the accumulation models of sim/gemm/gemm.hpp
// (docs/numerics.md §3-4), for every scaling kind: per-tensor, rowwise/columnwise, block 1x128 and
// 128x128, MXFP8 1x32/32x1 (which Hopper's tensor cores cannot run; these kernels can).
//
//   gpu::gemm with Accumulation::kFp32Seq                 must equal sim::gemm, the same model
//   gpu::gemm with Accumulation::kHopperSplitAccumulator  must equal sim::gemm, the same model
//   gpu::gemm with Accumulation::kHopperFastAccum         must equal sim::gemm, the same model
//   (sim::Accumulation, sim/settings.hpp; kExact has no kernel: refused by name)
//   gpu::high_precision_gemm                            must equal sim::high_precision_gemm
//
// C[M, N] = sum over k of A(m, k) * B(n, k); each operand is a stored row-major tensor plus which
// of its dimensions is K, exactly as sim::GemmOperand. K-blocks, the per-block epilogue
// (t_j = RN(P_j * RN(sa_j * sb_j)), total = t_0 then RN(total + t_j)), bias, canonical NaN and
// bf16 output follow gemm.hpp's "order of operations" to the bit. pad_inner_dim is not offered:
// gemm.hpp proves that its zero padding changes no bit of any model.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "sim/format.hpp"
#include "sim/settings.hpp"

namespace fp8lab::gpu {

// One quantized operand in device memory (the device view of sim::QuantizedTensor).
struct DeviceGemmOperand {
  const std::uint8_t* codes = nullptr;  // [rows, cols] row-major
  const float* scale_inv = nullptr;     // [ceil(rows/block_rows), ceil(cols/block_cols)] row-major
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t block_rows = 0;
  std::int64_t block_cols = 0;
  sim::Format format = sim::Format::E4M3;
  bool k_is_cols = true;  // sim::ReduceDim::kCols (true) or kRows (false)
};

// Throws std::invalid_argument naming the model unless gpu::gemm has a kernel for it (every
// sim::Accumulation but kExact).
void require_kernel(sim::Accumulation model);

struct DeviceGemmOptions {
  sim::Accumulation model = sim::Accumulation::kFp32Seq;
  bool bf16_output = false;     // out holds the bf16 values as their exact fp32 values (as sim)
  const float* bias = nullptr;  // N values added to every row, or null
};

// out: device [M, N] row-major fp32. Throws std::invalid_argument naming the operand and field
// for inconsistent shapes, null pointers, non-FP8 formats or scale blocks that do not line up
// along K (same rules as sim::gemm_shape and sim's K-blocks).
void gemm(const DeviceGemmOperand& a, const DeviceGemmOperand& b, const DeviceGemmOptions& options,
          float* out, cudaStream_t stream = nullptr);

// High-precision GEMM (sim::high_precision_gemm; baselines and GEMMs overridden to high
// precision): fp32 operands, optionally rounded RN to bf16 first, acc = RN(acc + RN(a_k * b_k)) in
// increasing k (no FMA: fp32 products are not exact), then bias, canonical NaN, output type.
struct DeviceDenseOperand {
  const float* data = nullptr;  // [rows, cols] row-major
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  bool k_is_cols = true;
};

struct DenseGemmOptions {
  bool round_operands_to_bf16 = false;
  bool bf16_output = false;
  const float* bias = nullptr;
};

void high_precision_gemm(const DeviceDenseOperand& a, const DeviceDenseOperand& b,
                         const DenseGemmOptions& options, float* out,
                         cudaStream_t stream = nullptr);

namespace host_twin {
// The kernels' per-output code (gpu/gemm/gemm_common.cuh) compiled for the host and run over
// operands, bias and out in HOST memory: checks the models' logic against sim/ without a GPU.
void gemm(const DeviceGemmOperand& a, const DeviceGemmOperand& b, const DeviceGemmOptions& options,
          float* out);
void high_precision_gemm(const DeviceDenseOperand& a, const DeviceDenseOperand& b,
                         const DenseGemmOptions& options, float* out);
}  // namespace host_twin

}  // namespace fp8lab::gpu
