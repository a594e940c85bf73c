// The FP4/FP6 quantizer and RHT kernels (gpu/scaling/fp4.hpp) against sim/ on the device: every
// code, scale byte, multiplier, scale_inv, NVFP4 global value and RHT output. The cases are
// experiments/gpu_check/fp4_checks.cpp, which gpu_fp4_host_test runs through the host twins.
#include <catch2/catch.hpp>

#include "experiments/gpu_check/checks.hpp"
#include "tests/gpu/check_results.hpp"

TEST_CASE("gpu FP4/FP6 quantizers and the RHT equal sim") {
  const auto results = fp8lab::experiments::gpu_check::check_fp4_kernels();
  CHECK(results.size() == 3 * 9 + 6 + 3 + 2);
  fp8lab::testing::check_every_result(results);
}
