// Runs a test body once per SIMD target that Highway compiled into sim/quantize.cpp and this CPU
// supports (STYLE.md §9: one test body for every backend), checking that the dispatcher really
// switched. Catch2's INFO names the target in every failure.
#pragma once

#include <hwy/targets.h>

#include <catch2/catch.hpp>
#include <string>

#include "sim/quantize.hpp"

namespace fp8lab::testing {

template <typename Body>
void for_each_simd_target(Body body) {
  for (const std::int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    INFO("target " << hwy::TargetName(target));
    REQUIRE(std::string(fp8lab::sim::bulk_target_name()) == hwy::TargetName(target));
    body();
  }
  hwy::SetSupportedTargetsForTest(0);
}

}  // namespace fp8lab::testing
