// The GEMM kernels' per-output code (gpu::host_twin::gemm) against sim::gemm, on the host: the
// same cases as gpu_gemm_test (experiments/gpu_check/gemm_checks.cpp), no GPU needed (label fast).
#include <catch2/catch.hpp>
#include <cstdio>

#include "experiments/gpu_check/checks.hpp"

TEST_CASE("host twin of the GEMM kernels equals sim::gemm for every model and scaling kind") {
  for (const auto& r : fp8lab::experiments::gpu_check::check_gemm_models(true)) {
    std::printf("%s\n", r.report().c_str());
    INFO(r.report());
    CHECK(r.mismatches == 0);
    CHECK(r.nonzero > 0);
  }
}
