// cuBLASLt FP8 GEMM (gpu/cublaslt.hpp). Our row-major C[M,N] = A[M,K] B[N,K]^T is cuBLASLt's
// column-major D[N,M] = op(A')[N,K] op(B')[K,M] with A' = our B buffer (column-major [K,N],
// transposed: op = T) and B' = our A buffer (column-major [K,M], op = N): the TN layout, so the
// cuBLASLt "A" side carries our B's format and scales and its "B" side our A's.
#include <cublasLt.h>

#include <stdexcept>
#include <string>

#include "gpu/cublaslt.hpp"
#include "gpu/cuda_check.hpp"

namespace fp8lab::gpu {
namespace {

void check(cublasStatus_t status, const char* call, const std::string& context) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLASLt ") + call + " failed: " +
                             cublasLtGetStatusName(status) + " (" + cublasLtGetStatusString(status) +
                             ") for " + context);
  }
}

cudaDataType fp8_type(sim::Format f) { return f == sim::Format::E4M3 ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2; }

constexpr std::size_t kWorkspaceBytes = 32u << 20;

}  // namespace

const char* to_string(CublasLtScaling scaling) {
  switch (scaling) {
    case CublasLtScaling::kTensorwise: return "tensorwise";
    case CublasLtScaling::kRowwise: return "rowwise";
    case CublasLtScaling::kBlock: return "block 1x128 x 128x128";
  }
  return "?";
}

// Owns every cuBLASLt object, so that a constructor that throws half way releases what it made.
struct CublasLtFp8Gemm::State {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void* workspace = nullptr;

  ~State() {
    if (workspace != nullptr) cudaFree(workspace);
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
    if (handle != nullptr) cublasLtDestroy(handle);
  }
};

std::string CublasLtFp8Gemm::describe() const {
  return std::to_string(shape_.m) + "x" + std::to_string(shape_.n) + "x" + std::to_string(shape_.k) +
         " A " + sim::spec(shape_.a_format).name + " B " + sim::spec(shape_.b_format).name + " " +
         to_string(shape_.scaling) + (shape_.fast_accum ? " fast_accum" : " split_accumulator") +
         (shape_.bf16_output ? " bf16-out" : " fp32-out");
}

CublasLtFp8Gemm::CublasLtFp8Gemm(const CublasLtGemmShape& shape) : shape_(shape), state_(new State) {
  const std::string context = describe();
  if (!sim::is_fp8(shape.a_format) || !sim::is_fp8(shape.b_format)) {
    throw std::invalid_argument("CublasLtFp8Gemm: formats must be e4m3 or e5m2 (" + context + ")");
  }
  if (shape.m % 16 != 0 || shape.n % 16 != 0 || shape.k % 16 != 0 || shape.m <= 0) {
    throw std::invalid_argument("CublasLtFp8Gemm: M, N, K must be positive multiples of 16 (" + context + ")");
  }
  State& s = *state_;
  check(cublasLtCreate(&s.handle), "cublasLtCreate", context);
  check(cublasLtMatmulDescCreate(&s.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate", context);
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa), "set TRANSA", context);
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb), "set TRANSB", context);
  const std::int8_t fast = shape.fast_accum ? 1 : 0;
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast), "set FAST_ACCUM", context);
#if CUBLAS_VERSION >= 120900
  // cuBLASLt's A is our B (the weight), its B our A (see the file comment).
  std::int32_t lt_a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, lt_b_mode = lt_a_mode;
  if (shape.scaling == CublasLtScaling::kRowwise) {
    lt_a_mode = lt_b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
  } else if (shape.scaling == CublasLtScaling::kBlock) {
    lt_a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    lt_b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  }
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &lt_a_mode, sizeof lt_a_mode), "set A_SCALE_MODE", context);
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &lt_b_mode, sizeof lt_b_mode), "set B_SCALE_MODE", context);
#else
  // Older cuBLAS: tensorwise scales only (the scale-mode attributes arrived with 12.8/12.9).
  if (shape.scaling != CublasLtScaling::kTensorwise) {
    throw std::runtime_error("cuBLASLt " + std::to_string(CUBLAS_VERSION) + " has no " +
                             to_string(shape.scaling) + " FP8 scaling (needs cuBLAS >= 12.9) for " + context);
  }
#endif
  const auto k = static_cast<std::uint64_t>(shape.k);
  check(cublasLtMatrixLayoutCreate(&s.a, fp8_type(shape.b_format), k, static_cast<std::uint64_t>(shape.n), shape.k), "layout A'", context);
  check(cublasLtMatrixLayoutCreate(&s.b, fp8_type(shape.a_format), k, static_cast<std::uint64_t>(shape.m), shape.k), "layout B'", context);
  check(cublasLtMatrixLayoutCreate(&s.d, shape.bf16_output ? CUDA_R_16BF : CUDA_R_32F,
                                   static_cast<std::uint64_t>(shape.n), static_cast<std::uint64_t>(shape.m), shape.n),
        "layout D", context);
  cublasLtMatmulPreference_t preference = nullptr;
  check(cublasLtMatmulPreferenceCreate(&preference), "preference", context);
  check(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &kWorkspaceBytes, sizeof kWorkspaceBytes),
        "preference workspace", context);
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(s.handle, s.desc, s.a, s.b, s.d, s.d,
                                                               preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  check(status, "cublasLtMatmulAlgoGetHeuristic", context);
  if (found == 0) {
    throw std::runtime_error("cuBLASLt has no algorithm for " + context + " on this device");
  }
  s.algo = result.algo;
  FP8LAB_CUDA_CHECK(cudaMalloc(&s.workspace, kWorkspaceBytes));
}

CublasLtFp8Gemm::~CublasLtFp8Gemm() = default;

void CublasLtFp8Gemm::run(const std::uint8_t* a, const float* a_scale_inv, const std::uint8_t* b,
                          const float* b_scale_inv, void* out, cudaStream_t stream) {
  State& s = *state_;
  const std::string context = describe();
  // cuBLASLt's A is our B and vice versa (see the file comment).
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scale_inv, sizeof b_scale_inv), "set A_SCALE_POINTER", context);
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale_inv, sizeof a_scale_inv), "set B_SCALE_POINTER", context);
  const float alpha = 1.0f, beta = 0.0f;
  check(cublasLtMatmul(s.handle, s.desc, &alpha, b, s.a, a, s.b, &beta, out, s.d, out, s.d, &s.algo,
                       s.workspace, kWorkspaceBytes, stream),
        "cublasLtMatmul", context);
}

}  // namespace fp8lab::gpu
