// The GEMM kernels' per-output code (gpu::host_twin::gemm) against sim::gemm, on the host: the
// same cases as gpu_gemm_test (experiments/gpu_check/gemm_checks.cpp), no GPU needed (label fast).
#include <catch2/catch.hpp>
#include <vector>

#include "experiments/gpu_check/checks.hpp"
#include "tests/gpu/check_results.hpp"

TEST_CASE("host twin of the GEMM kernels equals sim::gemm for every model and scaling kind") {
  fp8lab::testing::check_every_result(fp8lab::experiments::gpu_check::check_gemm_models(true));
}

TEST_CASE("a matrix comparison counts every value and names a mismatch by row, column and bits") {
  using namespace fp8lab::experiments::gpu_check;
  const std::vector<float> expected = {0.0f, 2.0f, 1.0f, -3.0f};
  const std::vector<float> actual = {0.0f, 2.0f, 1.00000012f, -3.0f};  // C[1,0] one ulp up
  CheckResult peer;
  compare_matrix(peer, "2x2", expected, actual.data(), 2, {"model", "cublaslt"});
  CHECK(peer.compared == 4);
  CHECK(peer.nonzero == 3);
  CHECK(peer.mismatches == 1);
  CHECK(peer.max_ulp == 1);
  REQUIRE(peer.first.size() == 1);
  CHECK(peer.first[0] == "2x2 C[1,0]: model 0x3F800000 (1), cublaslt 0x3F800001 (1.00000012)");
  CheckResult kernel;
  compare_matrix(kernel, "k", expected, actual.data(), 2);
  REQUIRE(kernel.first.size() == 1);
  CHECK(kernel.first[0] == "k C[1,0]: sim 0x3F800000 (1), gpu 0x3F800001 (1.00000012)");
}
