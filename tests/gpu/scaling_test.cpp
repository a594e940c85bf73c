// gpu::scaling quantizers (current, axiswise, block, MXFP8) against sim::scaling: every code,
// scale, scale_inv, E8M0 code and statistic. The cases are experiments/gpu_check/scaling_checks.cpp,
// the same ones `fp8lab check` runs.
#include <catch2/catch.hpp>
#include <cstdio>

#include "experiments/gpu_check/checks.hpp"

TEST_CASE("gpu scaling quantizers equal sim::scaling") {
  for (const auto& r : fp8lab::experiments::gpu_check::check_scaling_quantizers()) {
    std::printf("%s\n", r.report().c_str());
    INFO(r.report());
    CHECK(r.mismatches == 0);
    CHECK(r.nonzero > 0);
  }
}
