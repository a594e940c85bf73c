// The vendor path: FP8 GEMM through cuBLASLt (tensorcore-and-papers.md §2). A peer, not a
// reference: its outputs are compared with the `hopper` and `fp32_seq` models and the distance
// is reported (experiments/gpu_check), never assumed (NUMERICS.md §4).
//
// Layout: C[M, N] = A[M, K] * B[N, K]^T, A and B row-major with K contiguous (a Linear's X and W),
// C row-major. In cuBLASLt's column-major terms this is C^T = B^T' A^T' with B transposed: the
// "TN" layout Hopper requires for FP8 (§2.1). cuBLASLt needs K, M, N multiples of 16 here.
// Scales are dequantization factors (scale_inv), as cuBLASLt's A/B_SCALE_POINTER expect (§2.2):
//   kTensorwise: one float per operand (CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F)
//   kRowwise:    M floats for A, N for B (OUTER_VEC_32F, sm_90 with cuBLAS >= 12.9)
//   kBlock:      DeepSeek-V3 / TE Float8BlockScaling: A (activations) 1x128 blocks (VEC128_32F),
//                B (weights) 128x128 tiles (BLK128x128_32F); cuBLAS 12.9+, sm_90. Layouts as the
//                cuBLAS documentation and torch._scaled_mm describe them (tensorcore-and-papers.md
//                §2.3, §2.5): A's scales outer-dimension-major, [ceil(K/128)][M]; B's
//                [ceil(N/128)][ceil(K/128)] with K contiguous (use K a multiple of 512 so that no
//                row padding question arises). Not validated on a GPU when written: the peer
//                check reports what it measures.
// fast_accum = CUBLASLT_MATMUL_DESC_FAST_ACCUM (TE: use_split_accumulator = !fast_accum, §2.4).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "sim/format.hpp"

namespace fp8lab::gpu {

enum class CublasLtScaling : std::uint8_t { kTensorwise, kRowwise, kBlock };
const char* to_string(CublasLtScaling scaling);

struct CublasLtGemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  sim::Format a_format = sim::Format::E4M3;
  sim::Format b_format = sim::Format::E4M3;  // E5M2 x E5M2 is not offered by cuBLASLt
  CublasLtScaling scaling = CublasLtScaling::kTensorwise;
  bool fast_accum = false;
  bool bf16_output = false;  // else fp32
};

// One configured FP8 GEMM: descriptors and the heuristic's first algorithm, built once; run() many
// times. Construction throws std::runtime_error naming the cuBLASLt status and the shape when
// cuBLASLt rejects the combination or has no algorithm for it on this device.
class CublasLtFp8Gemm {
 public:
  explicit CublasLtFp8Gemm(const CublasLtGemmShape& shape);
  ~CublasLtFp8Gemm();
  CublasLtFp8Gemm(const CublasLtFp8Gemm&) = delete;
  CublasLtFp8Gemm& operator=(const CublasLtFp8Gemm&) = delete;

  // Device pointers: a [M, K] codes, b [N, K] codes, their scale_inv (1 or M / N floats), out
  // [M, N] fp32 or bf16 bits.
  void run(const std::uint8_t* a, const float* a_scale_inv, const std::uint8_t* b,
           const float* b_scale_inv, void* out, cudaStream_t stream = nullptr);

  const CublasLtGemmShape& shape() const { return shape_; }
  std::string describe() const;

 private:
  struct State;
  CublasLtGemmShape shape_;
  std::unique_ptr<State> state_;
};

}  // namespace fp8lab::gpu
