// gpu::gemm (fp32_seq and both Hopper models) against sim::gemm for every scaling kind, in the
// fprop/dgrad/wgrad layouts, fp32/bf16 output, with and without bias: every output bit for bit.
// The cases are experiments/gpu_check/gemm_checks.cpp, the same ones `fp8lab check` runs.
#include <catch2/catch.hpp>

#include "experiments/gpu_check/checks.hpp"
#include "tests/gpu/check_results.hpp"

TEST_CASE("gpu::gemm equals sim::gemm for every model and scaling kind") {
  fp8lab::testing::check_every_result(fp8lab::experiments::gpu_check::check_gemm_models());
}
