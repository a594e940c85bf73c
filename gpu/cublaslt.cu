// cuBLASLt FP8 GEMM (gpu/cublaslt.hpp). Our row-major C[M,N] = A[M,K] B[N,K]^T is cuBLASLt's
// column-major D[N,M] = op(A')[N,K] op(B')[K,M] with A' = our B buffer (column-major [K,N],
// transposed: op = T) and B' = our A buffer (column-major [K,M], op = N): the TN layout, so the
// cuBLASLt "A" side carries our B's format, scale mode and scales and its "B" side our A's.
#include <cublasLt.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gpu/cublaslt.hpp"
#include "gpu/cuda_check.hpp"
#include "sim/element_count.hpp"

namespace fp8lab::gpu {
namespace {

void check(cublasStatus_t status, const char* call, const std::string& context) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("cuBLASLt ") + call +
                             " failed: " + cublasLtGetStatusName(status) + " (" +
                             cublasLtGetStatusString(status) + ") for " + context +
                             " (CUBLASLT_LOG_LEVEL=1 prints cuBLASLt's reason)");
  }
}

cudaDataType fp8_type(sim::Format f) {
  return f == sim::Format::E4M3 ? CUDA_R_8F_E4M3 : CUDA_R_8F_E5M2;
}

bool aligned(const void* p, std::uintptr_t bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % bytes == 0;
}

#if CUBLAS_VERSION >= 120900
std::int32_t cublas_mode(CublasLtScaleMode mode) {
  switch (mode) {
    case CublasLtScaleMode::kScalar: return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    case CublasLtScaleMode::kOuterVector: return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case CublasLtScaleMode::kVec128: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case CublasLtScaleMode::kBlock128x128: return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  }
  throw std::invalid_argument("unknown CublasLtScaleMode");
}
#endif

// cuBLASLt's default CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_{A,B,C,D}_BYTES is 256: the heuristic may
// return algorithms that assume it, so run() checks the data pointers (cudaMalloc gives 256).
constexpr std::uintptr_t kDataAlignment = 256;
// "The scaling factors' starting address must be 16-byte aligned" (cuBLAS docs §3.1.4.5.1).
constexpr std::uintptr_t kScaleAlignment = 16;

}  // namespace

const char* to_string(CublasLtScaling scaling) {
  switch (scaling) {
    case CublasLtScaling::kTensorwise: return "tensorwise";
    case CublasLtScaling::kRowwise: return "rowwise";
    case CublasLtScaling::kBlock: return "block 1x128 x 128x128";
    case CublasLtScaling::kBlock1x128: return "block 1x128 x 1x128";
  }
  return "?";
}

CublasLtScaleMode a_scale_mode(CublasLtScaling scaling) {
  switch (scaling) {
    case CublasLtScaling::kTensorwise: return CublasLtScaleMode::kScalar;
    case CublasLtScaling::kRowwise: return CublasLtScaleMode::kOuterVector;
    case CublasLtScaling::kBlock:
    case CublasLtScaling::kBlock1x128: return CublasLtScaleMode::kVec128;
  }
  throw std::invalid_argument("unknown CublasLtScaling");
}

CublasLtScaleMode b_scale_mode(CublasLtScaling scaling) {
  switch (scaling) {
    case CublasLtScaling::kTensorwise: return CublasLtScaleMode::kScalar;
    case CublasLtScaling::kRowwise: return CublasLtScaleMode::kOuterVector;
    case CublasLtScaling::kBlock: return CublasLtScaleMode::kBlock128x128;
    case CublasLtScaling::kBlock1x128: return CublasLtScaleMode::kVec128;
  }
  throw std::invalid_argument("unknown CublasLtScaling");
}

// Owns every cuBLASLt object, so that a constructor that throws half way releases what it made.
struct CublasLtFp8Gemm::State {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool have_algo = false;
  int algo_index = 0;        // position in the heuristic's order
  int candidates_timed = 0;  // > 0: chosen by autotune() among this many
  void* workspace = nullptr;

  ~State() {
    if (workspace != nullptr) cudaFree(workspace);
    if (d != nullptr) cublasLtMatrixLayoutDestroy(d);
    if (b != nullptr) cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) cublasLtMatmulDescDestroy(desc);
    if (handle != nullptr) cublasLtDestroy(handle);
  }

  std::vector<cublasLtMatmulHeuristicResult_t> heuristic(int count, std::size_t workspace_bytes,
                                                         const std::string& context) const {
    cublasLtMatmulPreference_t preference = nullptr;
    check(cublasLtMatmulPreferenceCreate(&preference), "cublasLtMatmulPreferenceCreate", context);
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(count));
    int found = 0;
    cublasStatus_t status =
        cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes, sizeof workspace_bytes);
    if (status == CUBLAS_STATUS_SUCCESS) {
      status = cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, d, d, preference, count,
                                              results.data(), &found);
    }
    cublasLtMatmulPreferenceDestroy(preference);
    check(status, "cublasLtMatmulAlgoGetHeuristic", context);
    if (found == 0)
      throw std::runtime_error("cuBLASLt has no algorithm for " + context + " on this device");
    results.resize(static_cast<std::size_t>(found));
    return results;
  }

  cublasStatus_t matmul(const cublasLtMatmulAlgo_t& chosen, const CublasLtOperands& o,
                        std::size_t workspace_bytes, cudaStream_t stream) const {
    const float alpha = 1.0f, beta = 0.0f;
    // cuBLASLt's A is our B and vice versa (see the file comment).
    return cublasLtMatmul(handle, desc, &alpha, o.b, a, o.a, b, &beta, o.out, d, o.out, d, &chosen,
                          workspace, workspace_bytes, stream);
  }
};

std::string CublasLtFp8Gemm::describe() const {
  std::string text = std::to_string(shape_.m) + "x" + std::to_string(shape_.n) + "x" +
                     std::to_string(shape_.k) + " A " + sim::spec(shape_.a_format).name + " (" +
                     to_string(a_scale_mode(shape_.scaling)) + ") B " +
                     sim::spec(shape_.b_format).name + " (" +
                     to_string(b_scale_mode(shape_.scaling)) + ") " + to_string(shape_.scaling) +
                     (shape_.fast_accum ? " fast_accum" : " split_accumulator") +
                     (shape_.bf16_output ? " bf16-out" : " fp32-out");
  if (state_ && state_->have_algo) {
    text += state_->candidates_timed > 0
                ? ", autotuned: heuristic #" + std::to_string(state_->algo_index) + " fastest of " +
                      std::to_string(state_->candidates_timed)
                : ", heuristic #0";
  }
  return text;
}

CublasLtFp8Gemm::CublasLtFp8Gemm(const CublasLtGemmShape& shape)
    : shape_(shape), state_(new State) {
  const std::string context = describe();
  if (!sim::is_fp8(shape.a_format) || !sim::is_fp8(shape.b_format)) {
    throw std::invalid_argument("CublasLtFp8Gemm: formats must be e4m3 or e5m2 (" + context + ")");
  }
  // cuBLAS docs, cublasLtMatmul FP8 type table: E4M3xE4M3, E4M3xE5M2, E5M2xE4M3 (§2.1).
  if (shape.a_format == sim::Format::E5M2 && shape.b_format == sim::Format::E5M2) {
    throw std::invalid_argument(
        "CublasLtFp8Gemm: cuBLASLt has no e5m2 x e5m2 FP8 GEMM (accepted: e4m3 x e4m3, "
        "e4m3 x e5m2, e5m2 x e4m3) for " +
        context);
  }
  // Tensor Core Usage: FP8 K, lda, ldb multiples of 16; M and N multiples of 16 keep D's rows
  // 16-byte aligned for every output type (and the block modes' multiples of 4).
  if (shape.m % 16 != 0 || shape.n % 16 != 0 || shape.k % 16 != 0 || shape.m <= 0 || shape.n <= 0 ||
      shape.k <= 0) {
    throw std::invalid_argument("CublasLtFp8Gemm: M, N, K must be positive multiples of 16 (" +
                                context + ")");
  }
  sim::checked_element_count("CublasLtFp8Gemm A (M x K)", shape.m, shape.k);
  sim::checked_element_count("CublasLtFp8Gemm B (N x K)", shape.n, shape.k);
  sim::checked_element_count("CublasLtFp8Gemm D (M x N)", shape.m, shape.n);
  const bool block = shape.scaling == CublasLtScaling::kBlock ||
                     shape.scaling == CublasLtScaling::kBlock1x128;
  if (block && shape.fast_accum) {
    throw std::invalid_argument(
        "CublasLtFp8Gemm: cuBLASLt block scaling (VEC128 / BLK128x128) runs only with "
        "the split accumulator (fast_accum = false; torch refuses fast accum with "
        "blockwise scales, TE's test expects CUBLAS_STATUS_NOT_SUPPORTED) for " +
        context);
  }
  State& s = *state_;
  check(cublasLtCreate(&s.handle), "cublasLtCreate", context);
  check(cublasLtMatmulDescCreate(&s.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        "cublasLtMatmulDescCreate", context);
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof transa),
        "set TRANSA", context);
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof transb),
        "set TRANSB", context);
  const std::int8_t fast = shape.fast_accum ? 1 : 0;
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast),
        "set FAST_ACCUM", context);
#if CUBLAS_VERSION >= 120900
  if (shape.scaling != CublasLtScaling::kTensorwise && cublasLtGetVersion() < 120900) {
    throw std::runtime_error("cuBLASLt " + std::to_string(cublasLtGetVersion()) +
                             " at run time has no " + to_string(shape.scaling) +
                             " FP8 scaling (needs cuBLAS >= 12.9) for " + context);
  }
  // Only the A and B modes are set; "all other scaling modes must not be modified" (docs §3.1.4.3,
  // §3.1.4.5). cuBLASLt's A is our B (see the file comment).
  const std::int32_t lt_a_mode = cublas_mode(b_scale_mode(shape.scaling));
  const std::int32_t lt_b_mode = cublas_mode(a_scale_mode(shape.scaling));
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &lt_a_mode,
                                       sizeof lt_a_mode),
        "set A_SCALE_MODE", context);
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &lt_b_mode,
                                       sizeof lt_b_mode),
        "set B_SCALE_MODE", context);
#else
  // Older cuBLAS: tensorwise scales only (the scale-mode attributes arrived with 12.8/12.9).
  if (shape.scaling != CublasLtScaling::kTensorwise) {
    throw std::runtime_error("cuBLASLt " + std::to_string(CUBLAS_VERSION) + " has no " +
                             to_string(shape.scaling) + " FP8 scaling (needs cuBLAS >= 12.9) for " +
                             context);
  }
#endif
  const auto k = static_cast<std::uint64_t>(shape.k);
  check(cublasLtMatrixLayoutCreate(&s.a, fp8_type(shape.b_format), k,
                                   static_cast<std::uint64_t>(shape.n), shape.k),
        "layout A'", context);
  check(cublasLtMatrixLayoutCreate(&s.b, fp8_type(shape.a_format), k,
                                   static_cast<std::uint64_t>(shape.m), shape.k),
        "layout B'", context);
  // D (and C, unused with beta = 0): bf16 or fp32; FP8 D is not allowed with the vector and block
  // modes (docs §3.1.4.3, §3.1.4.5), so it is not offered at all.
  check(cublasLtMatrixLayoutCreate(&s.d, shape.bf16_output ? CUDA_R_16BF : CUDA_R_32F,
                                   static_cast<std::uint64_t>(shape.n),
                                   static_cast<std::uint64_t>(shape.m), shape.n),
        "layout D", context);
  FP8LAB_CUDA_CHECK(cudaMalloc(&s.workspace, shape.workspace_bytes));
}

CublasLtFp8Gemm::~CublasLtFp8Gemm() = default;

int CublasLtFp8Gemm::algorithm_index() const { return state_->have_algo ? state_->algo_index : -1; }

void CublasLtFp8Gemm::check_and_set_scales(const CublasLtOperands& o) {
  State& s = *state_;
  const std::string context = describe();
  if (o.a == nullptr || o.b == nullptr || o.out == nullptr || !aligned(o.a, kDataAlignment) ||
      !aligned(o.b, kDataAlignment) || !aligned(o.out, kDataAlignment)) {
    throw std::invalid_argument(
        "CublasLtFp8Gemm: a, b and out must be non-null, 256-byte aligned device pointers "
        "(cuBLASLt's default minimum alignment preference) for " +
        context);
  }
  if (o.a_scale_inv == nullptr || o.b_scale_inv == nullptr ||
      !aligned(o.a_scale_inv, kScaleAlignment) || !aligned(o.b_scale_inv, kScaleAlignment)) {
    throw std::invalid_argument(
        "CublasLtFp8Gemm: scale_inv pointers must be non-null and 16-byte aligned "
        "(cuBLAS docs §3.1.4.5.1) for " +
        context);
  }
  // cuBLASLt's A is our B and vice versa (see the file comment).
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &o.b_scale_inv,
                                       sizeof o.b_scale_inv),
        "set A_SCALE_POINTER", context);
  check(cublasLtMatmulDescSetAttribute(s.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &o.a_scale_inv,
                                       sizeof o.a_scale_inv),
        "set B_SCALE_POINTER", context);
}

void CublasLtFp8Gemm::run(const CublasLtOperands& operands, cudaStream_t stream) {
  State& s = *state_;
  check_and_set_scales(operands);
  if (!s.have_algo) {
    s.algo = s.heuristic(1, shape_.workspace_bytes, describe()).front().algo;
    s.have_algo = true;
    s.algo_index = 0;
  }
  check(s.matmul(s.algo, operands, shape_.workspace_bytes, stream), "cublasLtMatmul", describe());
}

std::vector<CublasLtCandidate> CublasLtFp8Gemm::autotune(const CublasLtOperands& operands,
                                                         int max_candidates, int repeats) {
  State& s = *state_;
  if (max_candidates < 1 || repeats < 1) {
    throw std::invalid_argument(
        "CublasLtFp8Gemm::autotune: max_candidates and repeats must be >= 1");
  }
  check_and_set_scales(operands);
  const auto results = s.heuristic(max_candidates, shape_.workspace_bytes, describe());
  cudaEvent_t start = nullptr, stop = nullptr;
  FP8LAB_CUDA_CHECK(cudaEventCreate(&start));
  FP8LAB_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<CublasLtCandidate> candidates;
  int best = -1;
  for (std::size_t i = 0; i < results.size(); ++i) {
    CublasLtCandidate c;
    c.index = static_cast<int>(i);
    c.workspace_bytes = results[i].workspaceSize;
    c.milliseconds = -1.0;
    const cublasStatus_t status =
        results[i].state != CUBLAS_STATUS_SUCCESS
            ? results[i].state
            : s.matmul(results[i].algo, operands, shape_.workspace_bytes, nullptr);
    if (status != CUBLAS_STATUS_SUCCESS) {  // the heuristic's own verdict, or the warm-up call's
      c.failure = cublasLtGetStatusName(status);
      candidates.push_back(c);
      continue;
    }
    FP8LAB_CUDA_CHECK(cudaEventRecord(start));
    for (int r = 0; r < repeats; ++r)
      s.matmul(results[i].algo, operands, shape_.workspace_bytes, nullptr);
    FP8LAB_CUDA_CHECK(cudaEventRecord(stop));
    FP8LAB_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    FP8LAB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    c.milliseconds = static_cast<double>(ms) / repeats;
    if (best < 0 || c.milliseconds < candidates[static_cast<std::size_t>(best)].milliseconds)
      best = static_cast<int>(i);
    candidates.push_back(c);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (best < 0)
    throw std::runtime_error("cuBLASLt: none of " + std::to_string(results.size()) +
                             " heuristic candidates ran for " + describe());
  s.algo = results[static_cast<std::size_t>(best)].algo;
  s.have_algo = true;
  s.algo_index = best;
  s.candidates_timed = static_cast<int>(results.size());
  return candidates;
}

}  // namespace fp8lab::gpu
