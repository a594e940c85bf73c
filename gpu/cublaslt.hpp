// The vendor path: FP8 GEMM through cuBLASLt (tensorcore-and-papers.md §2). A peer, not a
// reference: its outputs are compared with the `hopper` and `fp32_seq` models and the distance
// is reported (experiments/gpu_check), never assumed (docs/numerics.md §4).
//
// Layout: C[M, N] = A[M, K] * B[N, K]^T, A and B row-major with K contiguous (a Linear's X and W),
// C row-major. In cuBLASLt's column-major terms this is C^T = B^T' A^T' with B transposed: the
// "TN" layout Hopper requires for FP8 (§2.1). cuBLASLt needs K, M, N multiples of 16 here.
// Scales are dequantization factors (scale_inv), as cuBLASLt's A/B_SCALE_POINTER expect (§2.2),
// in the layouts of gpu/cublaslt_scale_layout.hpp (cublaslt_scale_layout converts sim's):
//   kTensorwise  one float per operand (SCALAR_32F)
//   kRowwise     M floats for A, N for B (OUTER_VEC_32F; sm_90, cuBLAS >= 12.9)
//   kBlock       DeepSeek-V3 / TE Float8BlockScaling fprop: A (activations) 1x128 blocks
//                (VEC128_32F), B (weights) 128x128 tiles (BLK128x128_32F); sm_90, cuBLAS >= 12.9
//   kBlock1x128  both operands 1x128 blocks (VEC128_32F x VEC128_32F; TE's 1D x 1D GEMMs)
// What cuBLASLt accepts for the last three, with sources (cuBLAS docs §3.1.4.3 / §3.1.4.5,
// TransformerEngine common/gemm/cublaslt_gemm.cu and tests/pytorch/test_float8_blockwise_gemm_exact.py,
// pytorch aten/src/ATen/cuda/CUDABlas.cpp get_scale_mode / scaled_gemm):
//   - D is bf16, fp16 or fp32 (no FP8 D, no scale_D): we offer fp32 and bf16;
//   - block modes: 128x128 x 128x128 is refused (docs table; TE checks it), so not offered; fast
//     accumulation is refused (torch: "scaled_gemm doesn't support fast accum with 1x128 blockwise
//     scaling"; TE's test_split_accumulator_enforced expects CUBLAS_STATUS_NOT_SUPPORTED), so
//     construction throws for it;
//   - outer vector: fast accumulation allowed (torch passes use_fast_accum through);
//   - M and N multiples of 4, scale pointers 16-byte aligned (docs §3.1.4.5.1): checked;
//   - the scale pointers are set on the descriptor before cublasLtMatmulAlgoGetHeuristic, as
//     torch and TE both do. The first version queried with them unset (NULL) and the H200 run
//     (docs/device-log.md, cuBLAS 13.0) got CUBLAS_STATUS_INVALID_VALUE from the heuristic for
//     every vector and block mode while tensorwise (where NULL means 1) worked. cuBLASLt's log
//     names this refusal: "[cublasLtMatmulAlgoGetHeuristic] The scaling mode for A scale
//     (VEC16_UE4M3) requires a custom pointer for A scale", status 7 = INVALID_VALUE
//     (NVIDIA/CUDALibrarySamples issue #274). So the algorithm is chosen by run() or autotune(),
//     which know the operands, not by the constructor;
//   - VEC128 / BLK128x128 arrived in cuBLAS 12.9 and run on sm_90 only (docs table "9.0";
//     NVIDIA/CUDALibrarySamples issue #310, where 12.9.1 is recommended for the 128x128 speed).
// fast_accum = CUBLASLT_MATMUL_DESC_FAST_ACCUM (TE: use_split_accumulator = !fast_accum, §2.4).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpu/cublaslt_scale_layout.hpp"
#include "sim/format.hpp"

namespace fp8lab::gpu {

enum class CublasLtScaling : std::uint8_t { kTensorwise, kRowwise, kBlock, kBlock1x128 };
const char* to_string(CublasLtScaling scaling);
// The scale modes of our A (activations) and our B (weights) for a scaling kind.
CublasLtScaleMode a_scale_mode(CublasLtScaling scaling);
CublasLtScaleMode b_scale_mode(CublasLtScaling scaling);

struct CublasLtGemmShape {
  std::int64_t m = 0, n = 0, k = 0;
  sim::Format a_format = sim::Format::E4M3;
  sim::Format b_format = sim::Format::E4M3;  // E5M2 x E5M2 is not offered by cuBLASLt
  CublasLtScaling scaling = CublasLtScaling::kTensorwise;
  bool fast_accum = false;
  bool bf16_output = false;  // else fp32
  std::size_t workspace_bytes = 32u << 20;
};

// Device pointers of one GEMM: a [M, K] codes, b [N, K] codes, their scale_inv in the layout of
// the shape's scaling (cublaslt_scale_layout), out [M, N] fp32 or bf16 bits.
struct CublasLtOperands {
  const std::uint8_t* a = nullptr;
  const float* a_scale_inv = nullptr;
  const std::uint8_t* b = nullptr;
  const float* b_scale_inv = nullptr;
  void* out = nullptr;
};

// One heuristic candidate as autotune() measured it.
struct CublasLtCandidate {
  int index = 0;  // position in cuBLASLt's heuristic order
  std::size_t workspace_bytes = 0;
  double milliseconds = 0.0;  // mean per call; < 0 when the candidate failed to run
  std::string failure;        // why, when it failed
};

// One configured FP8 GEMM: descriptors built once, run() many times. The constructor throws
// std::invalid_argument for a combination that cuBLASLt documents as refused (naming what is
// accepted); cuBLASLt's own refusals (heuristic or matmul status) are std::runtime_error naming
// the call, the status and the shape.
class CublasLtFp8Gemm {
 public:
  explicit CublasLtFp8Gemm(const CublasLtGemmShape& shape);
  ~CublasLtFp8Gemm();
  CublasLtFp8Gemm(const CublasLtFp8Gemm&) = delete;
  CublasLtFp8Gemm& operator=(const CublasLtFp8Gemm&) = delete;

  // The first call without a chosen algorithm takes the heuristic's first result for these
  // operands (what torch and TE do).
  void run(const CublasLtOperands& operands, cudaStream_t stream = nullptr);

  // Chooses the algorithm by timing: up to max_candidates heuristic results, each run `repeats`
  // times after one warm-up call on the default stream; keeps the fastest that ran. Returns every
  // candidate's figures. Throws std::runtime_error when none ran. The operands' contents change
  // nothing but the output (the GEMM is pure), so callers may pass the buffers they will use.
  std::vector<CublasLtCandidate> autotune(const CublasLtOperands& operands, int max_candidates,
                                          int repeats);

  const CublasLtGemmShape& shape() const { return shape_; }
  // The chosen algorithm's position in the heuristic's order; -1 before run() or autotune().
  int algorithm_index() const;
  // Shape, formats, scale modes, accumulation, output type, and which algorithm (heuristic #i,
  // autotuned or not) once one is chosen.
  std::string describe() const;

 private:
  struct State;
  // Checks the operands' pointers (non-null; data 256-, scales 16-byte aligned) and sets the scale
  // pointers on the descriptor, where the heuristic query and the matmul read them.
  void check_and_set_scales(const CublasLtOperands& operands);
  CublasLtGemmShape shape_;
  std::unique_ptr<State> state_;
};

}  // namespace fp8lab::gpu
