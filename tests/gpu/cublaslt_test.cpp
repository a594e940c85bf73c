// cuBLASLt FP8 GEMM is a peer, not a reference (docs/numerics.md §4): this test prints how far it is
// from sim's hopper and fp32_seq models (bit-exact counts, max and mean ULP) for tensorwise,
// rowwise and block (1x128 x 128x128, 1x128 x 1x128) scales, fp32 and bf16 outputs, and requires
// only that it ran: the tensorwise rows always, and on sm_90 with cuBLAS >= 12.9 (where the cuBLAS
// documentation lists outer-vector and 128-block FP8 scaling) every rowwise row and the block rows
// with the split accumulator. The exactness claim, if any, is read from the printed figures.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "experiments/gpu_check/checks.hpp"
#include "gpu/cuda_check.hpp"

namespace {

bool contains(const std::string& text, const char* word) {
  return text.find(word) != std::string::npos;
}

}  // namespace

TEST_CASE("cuBLASLt FP8 GEMM against the hopper and fp32_seq models (reported)") {
  int device = 0;
  cudaDeviceProp prop{};
  FP8LAB_CUDA_CHECK(cudaGetDevice(&device));
  FP8LAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const bool documented_on_this_device = prop.major == 9 && cublasLtGetVersion() >= 120900;
  std::printf("device sm_%d%d, cuBLASLt %zu: rowwise and block modes %s\n", prop.major, prop.minor,
              cublasLtGetVersion(),
              documented_on_this_device ? "documented (required to run)" : "not required");
  std::uint64_t tensorwise_cases = 0;
  for (const auto& r : fp8lab::experiments::gpu_check::check_cublaslt_peer()) {
    std::printf("%s\n  exact %llu of %llu, mean ulp %.4g\n", r.report().c_str(),
                static_cast<unsigned long long>(r.compared - r.mismatches),
                static_cast<unsigned long long>(r.compared), r.mean_ulp());
    if (contains(r.kernel, "tensorwise")) tensorwise_cases += r.cases;
    const bool vector_or_block = contains(r.kernel, "rowwise") || contains(r.kernel, "block");
    const bool refused_by_design = contains(r.kernel, "block") && contains(r.kernel, "fast_accum");
    if (documented_on_this_device && vector_or_block && !refused_by_design) {
      INFO(r.report());
      CHECK(r.cases > 0);
    }
  }
  CHECK(tensorwise_cases > 0);
}
