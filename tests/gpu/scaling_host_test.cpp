// The block-scaled quantizers' per-block code (gpu::scaling::host_twin: the kernels' scale rules,
// casts and statistics) against sim::scaling, on the host: the same cases as gpu_scaling_test
// (experiments/gpu_check/scaling_checks.cpp), no GPU needed (label fast).
#include <catch2/catch.hpp>
#include <cstdio>

#include "experiments/gpu_check/checks.hpp"

TEST_CASE("host twin of the gpu scaling quantizers equals sim::scaling") {
  for (const auto& r : fp8lab::experiments::gpu_check::check_scaling_quantizers(true)) {
    std::printf("%s\n", r.report().c_str());
    INFO(r.report());
    CHECK(r.mismatches == 0);
    CHECK(r.nonzero > 0);
  }
}
